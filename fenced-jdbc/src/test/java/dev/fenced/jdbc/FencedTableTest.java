package dev.fenced.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class FencedTableTest {
    @Test
    void columnsHaveDefaultsAndStatesAreTheApplications() {
        FencedTable table = FencedTable.builder("billing.refund").scopeColumn("merchant").states("pending", "sending", "sent").build();
        assertThat(table.table()).isEqualTo("billing.refund");
        assertThat(table.idColumn()).isEqualTo("id");
        assertThat(table.stateColumn()).isEqualTo("state");
        assertThat(table.fenceColumn()).isEqualTo("fence");
        assertThat(table.pendingState()).isEqualTo("pending");
        assertThat(table.claimedState()).isEqualTo("sending");
        assertThat(table.doneState()).isEqualTo("sent");
        assertThat(table.scopeColumn()).contains("merchant");
    }

    /** A generic table knows no refund words: without states it serves its fences, and fenced rows refuse it. */
    @Test
    void aTableWithoutStatesHasNoneByDefaultAndFencedRowsAskForThem() {
        FencedTable table = FencedTable.builder("jobs").build();
        assertThat(table.hasStates()).isFalse();
        assertThatThrownBy(table::pendingState).isInstanceOf(IllegalStateException.class).hasMessageContaining("states(");
        assertThatThrownBy(() -> FencedRows.of(table)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("states(");
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
