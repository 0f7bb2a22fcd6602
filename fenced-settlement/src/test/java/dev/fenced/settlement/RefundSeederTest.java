package dev.fenced.settlement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RefundSeederTest {
    @Test
    void theArticlesBatchSumsTo84300AndR815Is70_25() {
        List<BigDecimal> amounts = RefundSeeder.amounts(1200, new BigDecimal("84300.00"));
        assertThat(amounts).hasSize(1200);
        assertThat(amounts.stream().reduce(BigDecimal.ZERO, BigDecimal::add)).isEqualByComparingTo("84300.00");
        assertThat(amounts.get(814)).isEqualByComparingTo("70.25");
        assertThat(RefundSeeder.refundId(815)).isEqualTo("r_815");
        assertThat(RefundSeeder.refundId(1)).isEqualTo("r_001");
        assertThat(RefundSeeder.refundId(1200)).isEqualTo("r_1200");
        assertThat(amounts).allMatch(a -> a.signum() > 0 && a.scale() == 2);
        assertThat(amounts.stream().distinct().count()).as("amounts vary").isGreaterThan(100);
        assertThat(RefundSeeder.amounts(1200, new BigDecimal("84300.00"))).as("deterministic").isEqualTo(amounts);
    }

    @ParameterizedTest
    @CsvSource({"7, 100.00", "3, 0.03", "1, 5", "13, 1000.07", "999, 12345.67"})
    void anySplitSumsExactly(int count, String total) {
        List<BigDecimal> amounts = RefundSeeder.amounts(count, new BigDecimal(total));
        assertThat(amounts.stream().reduce(BigDecimal.ZERO, BigDecimal::add)).isEqualByComparingTo(total);
        assertThat(amounts).allMatch(a -> a.compareTo(new BigDecimal("0.01")) >= 0);
    }

    @Test
    void rejectsWhatCannotBeSplit() {
        assertThatThrownBy(() -> RefundSeeder.amounts(0, BigDecimal.TEN)).hasMessageContaining("positive");
        assertThatThrownBy(() -> RefundSeeder.amounts(-3, BigDecimal.TEN)).hasMessageContaining("positive");
        assertThatThrownBy(() -> RefundSeeder.amounts(3, new BigDecimal("10.001"))).hasMessageContaining("two decimals");
        assertThatThrownBy(() -> RefundSeeder.amounts(3, new BigDecimal("0.02"))).hasMessageContaining("too small");
        assertThatThrownBy(() -> RefundSeeder.amounts(3, new BigDecimal("-1"))).hasMessageContaining("positive");
        assertThatThrownBy(() -> RefundSeeder.amounts(3, new BigDecimal("1e999999999"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("digits");
        assertThatThrownBy(() -> RefundSeeder.amounts(3, new BigDecimal("99999999999999999999"))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RefundSeeder.amounts(1, new BigDecimal("10000000000.00"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("9999999999.99");
        assertThat(RefundSeeder.amounts(1, RefundSeeder.MAX_AMOUNT)).containsExactly(RefundSeeder.MAX_AMOUNT);
        assertThatThrownBy(() -> Merchants.requireValid(" ")).hasMessageContaining("blank");
        assertThatThrownBy(() -> Merchants.requireValid("m 4471")).hasMessageContaining("letters");
    }
}
