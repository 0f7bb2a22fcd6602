package dev.fenced.cli;

import picocli.CommandLine.Model.CommandSpec;

/** How {@code settle} and {@code worker} become a hidden variant of themselves for a {@link CommandSet}. */
final class AdjustedCommands {
    private AdjustedCommands() {
    }

    /** {@code command} (built with {@code adjustment}) under {@code name}, hidden, taking the adjustment's options too. */
    static CommandSpec spec(Object command, String name, String description, WorkerAdjustment adjustment) {
        CommandSpec spec = CommandSpec.forAnnotatedObject(command);
        spec.name(name).usageMessage().hidden(true).description(description);
        return spec.addMixin("adjustment", CommandSpec.forAnnotatedObject(adjustment));
    }
}
