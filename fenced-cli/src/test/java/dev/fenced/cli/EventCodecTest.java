package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.fleet.JobEvent;
import dev.fenced.settlement.SettlementEvent;
import dev.fenced.settlement.SettlementOutcome;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The event-line protocol reads back exactly what it wrote, for every kind of line and every event type. */
class EventCodecTest {

    @Test
    void everyEventTypeRoundTrips() {
        for (SettlementEvent.Type type : SettlementEvent.Type.values()) {
            EventLine line = new EventLine.Event(type, "A", "m_4471", "r_815", 33, "stored fence 34", 1_700_000_000_123L, 4242);
            assertThat(EventCodec.read(EventCodec.write(line))).as(type.name()).contains(line);
        }
        assertThat(Arrays.stream(SettlementEvent.Type.values()).map(SettlementEvent.Type::wireName))
                .contains("lease-lost", "gateway-down", "acquired");
    }

    @Test
    void resultsAndReadyLinesRoundTrip() {
        EventLine refused = new EventLine.Result("A", "m_4471", SettlementOutcome.Result.FENCE_VIOLATION, 33, 814, 0, 0, 0, 386, "r_815",
                34L, "sending", null, 1L);
        EventLine finished = new EventLine.Result("B", "m_4471", SettlementOutcome.Result.COMPLETED, 34, 386, 1, 0, 0, 0, null, null, null,
                null, 2L);
        EventLine ready = new EventLine.Ready("w1", 3L);
        EventLine redelivered = new EventLine.Job(JobEvent.Type.RECEIVED, "w2", "m_4471", 12, 2, "delivery 2", 4L, 77);
        EventLine dead = new EventLine.Job(JobEvent.Type.DEAD_LETTERED, "w2", "m_1", 13, 5, "GATEWAY_UNAVAILABLE", 5L, 77);
        for (EventLine line : new EventLine[] {refused, finished, ready, redelivered, dead}) {
            assertThat(EventCodec.read(EventCodec.write(line))).contains(line);
        }
    }

    @Test
    void linesThatAreNotEventsAreSkippedNotFatal() {
        assertThat(EventCodec.read("settle m_1: COMPLETED")).isEmpty();
        assertThat(EventCodec.read("{not json")).isEmpty();
        assertThat(EventCodec.read("{\"type\":\"teleported\",\"at\":1}")).isEmpty();
        assertThat(EventCodec.read("{\"type\":\"job-teleported\",\"at\":1}")).isEmpty();
        assertThat(EventCodec.read("{\"type\":\"result\",\"result\":\"EXPLODED\"}")).isEmpty();
        assertThat(EventCodec.read(null)).isEmpty();
    }
}
