package dev.fenced.lab;

import dev.fenced.cli.CommandSet;
import dev.fenced.cli.SettleCommand;
import dev.fenced.cli.WorkerCommand;
import java.util.List;

/**
 * The lab's commands on the {@code fenced} command line: demo, compare, chaos, and the hidden
 * workers they start. {@code lab-settle} is the operator's {@code settle} and {@code lab-worker} the
 * fleet's {@code worker} (for the fleet's negative controls and {@code fenced chaos}; its tokens come
 * as {@code --tokens} says), each with the lab's knobs ({@link LabKnobs}); only the lab's
 * orchestrators start them.
 */
public final class LabCommands implements CommandSet {
    @Override
    public List<Object> commands() {
        return List.of(new DemoCommand(), new CompareCommand(), new ChaosCommand(),
                SettleCommand.adjusted("lab-settle", "Settle under a mechanism of the comparison, with breakpoints; for the lab.",
                        new LabKnobs()),
                WorkerCommand.adjusted("lab-worker", "Run a fleet worker under a mechanism of the comparison, with breakpoints; for the lab.",
                        new LabKnobs()));
    }
}
