package dev.fenced.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class FencedTableTest {
    @Test
    void defaultsFollowTheArticle() {
        FencedTable table = FencedTable.builder("billing.refund").scopeColumn("merchant").build();
        assertThat(table.table()).isEqualTo("billing.refund");
        assertThat(table.pendingState()).isEqualTo("pending");
        assertThat(table.claimedState()).isEqualTo("sending");
        assertThat(table.doneState()).isEqualTo("sent");
        assertThat(table.scopeColumn()).contains("merchant");
    }

    @ParameterizedTest
    @ValueSource(strings = {"refund; DROP TABLE refund", "re fund", "1refund", "a.b.c", "\"refund\"", "", "x--"})
    void rejectsTableNamesThatAreNotPlainIdentifiers(String name) {
        assertThatThrownBy(() -> FencedTable.builder(name).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("table");
    }

    @Test
    void rejectsBadColumnsAndStates() {
        assertThatThrownBy(() -> FencedTable.builder("refund").fenceColumn("fence)").build()).hasMessageContaining("fence column");
        assertThatThrownBy(() -> FencedTable.builder("refund").fenceColumn("state").build()).hasMessageContaining("must differ");
        assertThatThrownBy(() -> FencedTable.builder("refund").states("a", "a", "b").build()).hasMessageContaining("must differ");
        assertThatThrownBy(() -> FencedTable.builder("refund").states("pending", "in flight", "sent").build()).hasMessageContaining("claimed state");
        assertThatThrownBy(() -> FencedTable.builder(null).build()).isInstanceOf(IllegalArgumentException.class);
    }
}
