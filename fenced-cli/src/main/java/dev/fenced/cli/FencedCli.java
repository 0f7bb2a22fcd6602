package dev.fenced.cli;

import dev.fenced.gateway.PaymentGateway;
import dev.fenced.TokenIssuerMismatchException;
import dev.fenced.settlement.LeaseStoreMismatchException;
import dev.fenced.jdbc.DatabaseWaitException;
import dev.fenced.jdbc.UnsupportedDatabaseException;
import dev.fenced.internal.Redaction.Secret;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.Callable;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/**
 * The {@code fenced} command: the operator's commands, and those of any {@link CommandSet} on the
 * class path (the lab's demo, compare and chaos). Exit codes: 0 success, 1 runtime failure, 2 usage error; settle adds
 * 3 to 7, 9 (stopped by a signal) and 12 (a merchant without refunds), reconcile 4 and 8, a drain that outlasts its limit 10,
 * every command that takes a lease 11 when the merchant's tokens come from another issuer than {@code --tokens}, and 15
 * when a bound on a database wait ran out ({@link DatabaseWaits}). Every mistake is one line on stderr; nothing it prints carries a
 * secret from a URL it was given (see {@link Secrets}); libraries' log lines appear only with
 * {@code --verbose}.
 */
@Command(name = "fenced", mixinStandardHelpOptions = true, version = "fenced " + FencedCli.VERSION,
        description = "Redis leases made safe by fencing every protected write in the database.",
        subcommands = {SeedCommand.class, GatewayCommand.class, SettleCommand.class, WorkerCommand.class, EnqueueCommand.class,
                RequeueCommand.class, StatusCommand.class, ReconcileCommand.class, DoctorCommand.class, TokensCommand.class,
                MigrateCommand.class, TimelineCommand.class, PollCommand.class, WebhooksCommand.class})
public final class FencedCli implements Callable<Integer> {
    /** This build's version, as {@code fenced --version} prints it. */
    public static final String VERSION = "0.1.0";
    public static final int RUNTIME_FAILURE = 1;
    public static final int USAGE = 2;
    /** The merchant's tokens come from another issuer than {@code --tokens} names: nothing was taken. */
    public static final int TOKEN_ISSUER_MISMATCH = 11;
    /** A bound on a database wait ran out (a row lock another session kept, a statement's time): nothing of the wait was written. */
    public static final int DATABASE_WAIT = 15;
    /** The deployment's leases are in another store than {@code --leases} names: nothing was taken. */
    public static final int LEASE_STORE_MISMATCH = 16;
    /** What picocli appends to a conversion error: "(java.lang.NumberFormatException: ...)", a stack-trace word for a user. */
    private static final Pattern JAVA_EXCEPTION = Pattern.compile("\\s*\\((?:java|javax|picocli)\\.[\\w.$]+(?:Exception|Error)[^)]*\\)");

    private static final String COMMON_POOL_PARALLELISM = "java.util.concurrent.ForkJoinPool.common.parallelism";

    static {
        // Before any of the process's HTTP servers (the gateway, the webhook receiver, metrics) starts.
        PaymentGateway.useTcpNoDelay();
        // With a common pool of one thread (2 cores), CompletableFuture's default executor starts a thread per task (JDK 17
        // to 21), and the JDK's HttpClient.sendAsync hands every answer to it: a thread started per gateway call. The JDK
        // reads the property once, when ForkJoinPool is first initialized, which nothing has done before this block runs
        // (the main class's, first). BENCHMARKS.md, "CPU per refund".
        if (System.getProperty(COMMON_POOL_PARALLELISM) == null && Runtime.getRuntime().availableProcessors() <= 2) {
            System.setProperty(COMMON_POOL_PARALLELISM, "2");
        }
    }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--verbose", scope = ScopeType.INHERIT,
            description = "also print the log: fenced's decisions (leases, reseeds, raises, violations, takeover lookups, gateway outcomes)"
                    + " and the libraries' lines (drivers, Redis client, pool), on stderr")
    boolean verbose;

    /** No command: the usage, on stderr, as a usage error. */
    @Override
    public Integer call() {
        spec.commandLine().usage(System.err);
        return USAGE;
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the command line and returns its exit code; prints one line on stderr for any error. */
    public static int run(String... args) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        Set<Secret> secrets = Secrets.of(args, System.getenv());
        System.setOut(Secrets.scrubbing(out, secrets));
        System.setErr(Secrets.scrubbing(err, secrets));
        try {
            logTo(Arrays.asList(args).contains("--verbose") ? Level.INFO : Level.OFF);
            return execute(args);
        } finally {
            System.out.flush();
            System.err.flush();
            System.setOut(out);
            System.setErr(err);
        }
    }

    private static int execute(String... args) {
        CommandLine cli = new CommandLine(new FencedCli());
        for (CommandSet set : ServiceLoader.load(CommandSet.class)) {
            set.commands().forEach(cli::addSubcommand);
        }
        String unknown = unknownCommand(cli, args);
        if (unknown != null) {
            System.err.println("fenced: unknown command '" + unknown + "'; commands: "
                    + String.join(", ", cli.getSubcommands().entrySet().stream()
                    .filter(command -> !command.getValue().getCommandSpec().usageMessage().hidden()).map(Map.Entry::getKey).toList()));
            return USAGE;
        }
        cli.setParameterExceptionHandler((e, ignored) -> {
            System.err.println(prefix(e.getCommandLine()) + parameterError(e) + " (see --help)");
            return USAGE;
        });
        cli.setExecutionExceptionHandler((e, commandLine, parsed) -> {
            if (e instanceof TokenIssuerMismatchException mismatch) {
                System.err.println(prefix(commandLine) + TokensCommand.describe(mismatch));
                return TOKEN_ISSUER_MISMATCH;
            }
            if (e instanceof LeaseStoreMismatchException mismatch) {
                System.err.println(prefix(commandLine) + Connections.describe(mismatch));
                return LEASE_STORE_MISMATCH;
            }
            java.util.Optional<DatabaseWaitException> wait = DatabaseWaitException.in(e);
            if (wait.isPresent()) {
                String text = describe(wait.get());
                String waitedFor = wait.get().kind().waitedFor();
                System.err.println(prefix(commandLine) + (text.contains(waitedFor) ? text : "gave up waiting for " + waitedFor + ": " + text));
                return DATABASE_WAIT;
            }
            boolean usage = e instanceof UsageException || e instanceof IllegalArgumentException
                    || e instanceof UnsupportedDatabaseException;
            System.err.println(prefix(commandLine) + describe(e));
            if (System.getenv("FENCED_DEBUG") != null) {
                e.printStackTrace();
            }
            return usage ? USAGE : RUNTIME_FAILURE;
        });
        return cli.execute(args);
    }

    /**
     * An unknown option before anything else, with picocli's suggestion: picocli reports a missing
     * required option first, and "--merchnt" would read "Missing required option '--merchant'".
     */
    private static String parameterError(CommandLine.ParameterException e) {
        CommandLine command = e.getCommandLine();
        for (String argument : command.getUnmatchedArguments()) {
            if (argument.startsWith("-")) {
                List<String> suggestions = new CommandLine.UnmatchedArgumentException(command, List.of(argument)).getSuggestions();
                return "unknown option '" + argument + "'" + (suggestions.isEmpty() ? "" : "; did you mean " + String.join(" or ", suggestions) + "?");
            }
        }
        return JAVA_EXCEPTION.matcher(firstLine(e.getMessage())).replaceAll("");
    }

    /** The first argument when it is neither an option nor a command: picocli would let a later {@code --help} win. */
    private static String unknownCommand(CommandLine cli, String[] args) {
        if (args.length == 0 || args[0].startsWith("-") || cli.getSubcommands().containsKey(args[0])) {
            return null;
        }
        return args[0].length() <= 40 ? args[0] : args[0].substring(0, 40) + "...";
    }

    /** Every logger of the process (JUL, and SLF4J through it) at {@code level}, on this process's stderr. */
    private static void logTo(Level level) {
        LogManager.getLogManager().reset();
        Logger root = Logger.getLogger("");
        root.setLevel(level);
        if (level != Level.OFF) {
            ConsoleHandler handler = new ConsoleHandler(); // takes System.err as it is now: the scrubbing one
            handler.setLevel(level);
            handler.setFormatter(new OneLineFormatter());
            root.addHandler(handler);
        }
    }

    /** {@code 12:00:01.234 WARN  RedisLeaseStore: message}: one line per record, the stack trace only with FENCED_DEBUG. */
    static final class OneLineFormatter extends Formatter {
        private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS").withZone(ZoneId.systemDefault());

        @Override
        public String format(LogRecord record) {
            String logger = record.getLoggerName() == null ? "" : record.getLoggerName();
            String level = switch (record.getLevel().getName()) {
                case "SEVERE" -> "ERROR";
                case "WARNING" -> "WARN ";
                case "INFO" -> "INFO ";
                default -> "DEBUG";
            };
            StringBuilder line = new StringBuilder().append(TIME.format(record.getInstant())).append(' ').append(level).append(' ')
                    .append(logger.substring(logger.lastIndexOf('.') + 1)).append(": ").append(formatMessage(record));
            if (record.getThrown() != null) {
                line.append(" (").append(record.getThrown()).append(')');
            }
            return line.append(System.lineSeparator()).toString();
        }
    }

    private static String prefix(CommandLine commandLine) {
        return commandLine.getParent() == null ? "fenced: " : "fenced " + commandLine.getCommandName() + ": ";
    }

    static String describe(Throwable e) {
        String message = e.getMessage();
        if (message == null || message.isBlank()) {
            return e.getClass().getSimpleName() + " (set FENCED_DEBUG=1 for the stack trace)";
        }
        return firstLine(message);
    }

    private static String firstLine(String message) {
        return List.of(message.split("\\R", 2)).get(0);
    }
}
