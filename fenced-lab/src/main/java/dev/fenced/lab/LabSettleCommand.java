package dev.fenced.lab;

import dev.fenced.cli.SettleCommand;
import dev.fenced.settlement.SettlementWorker;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** The operator's {@code settle} with the lab's knobs ({@link LabKnobs}). Hidden: only the lab's orchestrators start it. */
@Command(name = "lab-settle", hidden = true, description = "settle, under a mechanism of the comparison, with breakpoints; for the lab")
final class LabSettleCommand extends SettleCommand {
    @Mixin
    LabKnobs knobs;

    @Override
    public Integer call() {
        knobs.validate();
        return super.call();
    }

    @Override
    protected SettlementWorker.Builder adapt(SettlementWorker.Builder builder) {
        return knobs.apply(builder, journal, name(), this::print);
    }

    @Override
    protected void beforeSettling() {
        knobs.awaitStartCue();
    }
}
