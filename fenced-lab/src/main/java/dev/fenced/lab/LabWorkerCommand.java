package dev.fenced.lab;

import dev.fenced.cli.EventLines;
import dev.fenced.cli.WorkerCommand;
import dev.fenced.settlement.SettlementWorker;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The fleet's {@code worker} with the lab's knobs ({@link LabKnobs}), for the fleet's negative
 * controls and {@code fenced chaos}; its tokens come as {@code --tokens} says. Hidden.
 */
@Command(name = "lab-worker", hidden = true, description = "a fleet worker under a mechanism of the comparison, with breakpoints; for the lab")
final class LabWorkerCommand extends WorkerCommand {
    @Mixin
    LabKnobs knobs;

    @Override
    public Integer call() {
        knobs.validate();
        return super.call();
    }

    @Override
    protected SettlementWorker.Builder adapt(SettlementWorker.Builder builder, String merchant) {
        return knobs.apply(builder, journal, name(), event -> EventLines.event(event, merchant));
    }
}
