package dev.fenced.lab;

import dev.fenced.cli.CommandSet;
import java.util.List;

/** The lab's commands on the {@code fenced} command line: demo, compare, chaos and the hidden workers they start. */
public final class LabCommands implements CommandSet {
    @Override
    public List<Object> commands() {
        return List.of(new DemoCommand(), new CompareCommand(), new ChaosCommand(), new LabSettleCommand(), new LabWorkerCommand());
    }
}
