package dev.fenced.cli;

import dev.fenced.internal.Redaction;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code fenced} command. Exit codes: 0 success, 1 runtime failure, 2 usage error; settle adds 3 to 7, reconcile 4 and 8. */
@Command(name = "fenced", mixinStandardHelpOptions = true, version = "fenced 0.1.0",
        description = "Redis leases made safe by fencing every protected write in the database.",
        subcommands = {SeedCommand.class, GatewayCommand.class, SettleCommand.class, StatusCommand.class, ReconcileCommand.class, DemoCommand.class,
                CompareCommand.class, ChaosCommand.class, ChaosWorkerCommand.class})
public final class FencedCli implements Runnable {
    public static final int RUNTIME_FAILURE = 1;
    public static final int USAGE = 2;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.err);
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the command line and returns its exit code; prints one line on stderr for any error. */
    public static int run(String... args) {
        CommandLine cli = new CommandLine(new FencedCli());
        cli.setParameterExceptionHandler((e, ignored) -> {
            System.err.println("fenced " + e.getCommandLine().getCommandName() + ": " + Redaction.redactUri(e.getMessage())
                    + " (see --help)");
            return USAGE;
        });
        cli.setExecutionExceptionHandler((e, commandLine, parsed) -> {
            boolean usage = e instanceof UsageException || e instanceof IllegalArgumentException;
            System.err.println("fenced " + commandLine.getCommandName() + ": " + Redaction.redactUri(describe(e)));
            if (System.getenv("FENCED_DEBUG") != null) {
                e.printStackTrace();
            }
            return usage ? USAGE : RUNTIME_FAILURE;
        });
        return cli.execute(args);
    }

    private static String describe(Throwable e) {
        String message = e.getMessage();
        if (message == null || message.isBlank()) {
            return e.getClass().getSimpleName() + " (set FENCED_DEBUG=1 for the stack trace)";
        }
        return message.lines().findFirst().orElse(message);
    }
}
