package dev.fenced.cli;

import dev.fenced.settlement.SettlementEvent;
import dev.fenced.settlement.SettlementWorker;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * What a {@link CommandSet} changes in the settlement workers of a {@code settle} or {@code worker}
 * command it registers under a hidden name of its own ({@link SettleCommand#adjusted},
 * {@link WorkerCommand#adjusted}): the lab's weaker mechanisms, breakpoints and cues. Its
 * {@code @Option} fields become options of that command.
 *
 * <p>The operator's {@code fenced settle} and {@code fenced worker} have none: nothing on the class
 * path can make them write without the fence. An adjusted command is not the operator's.
 */
public interface WorkerAdjustment {
    /** Checks the adjustment's options before anything connects; a {@link UsageException} is the command's usage error. */
    default void validate() {
    }

    /** Changes a run's worker before it is built; returns the builder. */
    SettlementWorker.Builder adjust(SettlementWorker.Builder builder, Context context);

    /** Runs after {@code settle}'s worker is built and before it takes the lease. */
    default void beforeSettling() {
    }

    /**
     * What the command knows of the worker it builds.
     *
     * @param worker the worker's {@code --name}
     * @param journal the journal's database when one was given, or null
     * @param events where the command prints the run's events (as event lines with {@code --events})
     */
    record Context(String worker, DataSource journal, Consumer<SettlementEvent> events) {
    }
}
