package dev.fenced.settlement;

import dev.fenced.provider.RefundGateway;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * What every run of one {@link SettlementWorker} is given, checked once when the worker is built:
 * a run reads its settings here and never from the worker. Immutable; the objects it names (pool,
 * gateway) are shared by the runs and are thread-safe themselves.
 *
 * @param dataSource the database of the {@code refund} table
 * @param gateway the payment provider
 * @param concurrency refunds in flight at once under one token, 1 to 256
 * @param gatewayAttempts attempts per refund under the same idempotency key
 * @param gatewayBackoff the first retry's delay
 * @param gatewayFailureLimit refunds in a row without an answer from the gateway that stop the run
 * @param writes the writes on refund rows (fenced, unless the lab measures a weaker variant)
 * @param checkBeforeWrite whether the lease is read back before each write (a hint, not a fence)
 * @param hook called at each {@link SettlementWorker.Phase}
 * @param journal the second store appended at the end of a run; null when none
 * @param keyRetention how long the provider keeps a key, and the worker's clock that ages the rows' first attempts
 */
record RunSettings(DataSource dataSource, RefundGateway gateway, int concurrency, int gatewayAttempts,
                   Duration gatewayBackoff, int gatewayFailureLimit, RefundWrites writes, boolean checkBeforeWrite,
                   SettlementWorker.PhaseHook hook, SettlementJournal journal, KeyRetention keyRetention) {

    /** More than one refund in flight: claims go ahead of the sends and confirms are written on a thread of their own. */
    boolean pipelined() {
        return concurrency > 1;
    }
}
