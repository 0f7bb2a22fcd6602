package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Each command's help lists only the connection options it uses: {@code seed --help} names no Redis
 * or gateway, {@code doctor --help} no gateway or NATS. Every command of the command line must be
 * in the table, so a new one states what it connects to; the lab's are checked by the lab's tests.
 */
public class UsageOptionsTest {
    /** The lease options: where leases live, and Redis's and etcd's. */
    private static final Set<String> REDIS = Set.of("--leases", "--redis-url", "--redis-tls-ca", "--redis-tls-cert", "--redis-tls-key",
            "--redis-tls-verify", "--tokens", "--etcd-url");
    private static final Set<String> DATABASE = Set.of("--db-url");
    private static final Set<String> GATEWAY = Set.of("--gateway-url");
    private static final Set<String> NATS = Set.of("--nats-url", "--stream");
    private static final Set<String> JOURNAL = Set.of("--journal-db-url");
    private static final Set<String> CONNECTION_OPTIONS = union(REDIS, DATABASE, GATEWAY, NATS, JOURNAL);

    /** The connection options each operator's command uses in its call(). */
    public static final Map<String, Set<String>> OPERATOR_COMMANDS = Map.ofEntries(
            Map.entry("seed", union(DATABASE, NATS)),
            Map.entry("gateway", Set.of()),
            Map.entry("settle", union(REDIS, DATABASE, GATEWAY, JOURNAL)),
            Map.entry("worker", union(REDIS, DATABASE, GATEWAY, JOURNAL, NATS)),
            Map.entry("enqueue", union(NATS, DATABASE)),
            Map.entry("requeue", NATS),
            Map.entry("status", union(REDIS, DATABASE, GATEWAY, NATS)),
            Map.entry("reconcile", union(REDIS, DATABASE, GATEWAY)),
            Map.entry("poll", union(DATABASE, GATEWAY)),
            Map.entry("webhooks", union(DATABASE, GATEWAY)),
            Map.entry("doctor", union(DATABASE, REDIS)),
            Map.entry("tokens", union(DATABASE, REDIS)),
            Map.entry("migrate", union(DATABASE, Set.of("--leases", "--redis-url", "--etcd-url"))),
            Map.entry("timeline", Set.of()));

    @Test
    void everyOperatorCommandListsOnlyTheConnectionOptionsItUses() {
        assertThat(checkEveryCommand(OPERATOR_COMMANDS)).containsAll(OPERATOR_COMMANDS.keySet());
    }

    @Test
    void seedDoctorAndGatewayHelpNameNoServerTheyDoNotUse() {
        CliRun seed = CliRun.of("seed", "--help");
        assertThat(seed.exit()).isZero();
        assertThat(seed.stdout()).contains("--db-url").doesNotContain("--redis-url", "--redis-tls", "--tokens", "--gateway-url");
        CliRun doctor = CliRun.of("doctor", "--help");
        assertThat(doctor.stdout()).contains("--db-url").doesNotContain("--gateway-url", "--nats-url");
        CliRun gateway = CliRun.of("gateway", "--help");
        assertThat(gateway.stdout()).doesNotContain("--db-url", "--redis", "--tokens", "--gateway-url");
    }

    /**
     * Checks the help of every command on the command line, the {@link CommandSet}s' included, against
     * {@code uses}: the connection options (Redis, database, gateway, NATS, journal) each lists must be
     * exactly those. Returns the names of the commands checked.
     */
    public static Set<String> checkEveryCommand(Map<String, Set<String>> uses) {
        CommandLine cli = new CommandLine(new FencedCli());
        for (CommandSet set : ServiceLoader.load(CommandSet.class)) {
            set.commands().forEach(cli::addSubcommand);
        }
        Map<String, Set<String>> listed = new HashMap<>();
        cli.getSubcommands().forEach((name, command) -> listed.put(name, command.getCommandSpec().options().stream()
                .filter(option -> !option.hidden()).flatMap(option -> Stream.of(option.names()))
                .filter(CONNECTION_OPTIONS::contains).collect(Collectors.toCollection(TreeSet::new))));
        assertThat(uses).as("every command states the connections it uses").containsKeys(listed.keySet().toArray(String[]::new));
        listed.forEach((name, options) -> assertThat(options).as(name + " --help").isEqualTo(new TreeSet<>(uses.get(name))));
        return listed.keySet();
    }

    @SafeVarargs
    private static Set<String> union(Set<String>... sets) {
        return Stream.of(sets).flatMap(Set::stream).collect(Collectors.toUnmodifiableSet());
    }
}
