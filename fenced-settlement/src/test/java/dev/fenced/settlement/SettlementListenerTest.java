package dev.fenced.settlement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** Listeners together: one that throws keeps nothing from the others. */
class SettlementListenerTest {

    /**
     * A listener that throws comes first (the CLI's event lines before its meters): the one after it
     * still hears every event and answer, and the throw reaches the worker, which logs it.
     */
    @Test
    void aListenerThatThrowsKeepsNoEventFromTheOthers() {
        List<String> heard = new CopyOnWriteArrayList<>();
        SettlementListener throwing = new SettlementListener() {
            @Override
            public void onEvent(SettlementEvent event) {
                throw new IllegalStateException("broken listener");
            }

            @Override
            public void onGatewayAnswer(String outcome) {
                throw new IllegalStateException("broken listener");
            }
        };
        SettlementListener recording = new SettlementListener() {
            @Override
            public void onEvent(SettlementEvent event) {
                heard.add(event.type().name());
            }

            @Override
            public void onGatewayAnswer(String outcome) {
                heard.add(outcome);
            }
        };
        SettlementListener both = SettlementListener.all(throwing, recording, throwing);
        SettlementEvent event = new SettlementEvent(SettlementEvent.Type.CLAIMED, "w", "r_815", 33, null, 0);
        assertThatThrownBy(() -> both.onEvent(event)).hasMessage("broken listener")
                .satisfies(e -> assertThat(e.getSuppressed()).hasSize(1));
        assertThatThrownBy(() -> both.onGatewayAnswer("succeeded")).hasMessage("broken listener");
        assertThat(heard).containsExactly("CLAIMED", "succeeded");
    }
}
