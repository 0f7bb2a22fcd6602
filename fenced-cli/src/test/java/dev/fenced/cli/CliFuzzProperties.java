package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Generated bad input for every option of every command: each invocation is valid but for one
 * option, and must end with exit 2, exactly one line on stderr, nothing on stdout, no stack trace,
 * and nothing written to the database or to Redis. The servers are the real ones, named by the
 * options, so that a bad value that slipped through would reach them (and be seen doing so).
 */
public class CliFuzzProperties {
    protected static final String DB = TestDatabases.postgresUrl();
    protected static final String REDIS = TestRedis.uri();
    protected static final String MERCHANT = "m_fuzz";

    private static final List<String> BAD_MERCHANTS = List.of("", " ", "m 1", "m/1", "ü", "x".repeat(65), "m;DROP TABLE refund", "m_1\n");
    private static final List<String> BAD_DB_URLS = List.of("postgres://x", "http://x", "jdbc:oracle:thin:@x", "x", "jdbc:sqlite:/tmp/x");
    private static final List<String> BAD_REDIS_URLS = List.of("http://x", "redis//x", "redis://:pw@", "x", "redis://a b@host");
    private static final List<String> BAD_GATEWAY_URLS = List.of("ftp://x", "not a url", "http://", "127.0.0.1:8080");
    private static final List<String> BAD_NATS_URLS = List.of("http://x", "nats//x", "x", "nats://", "nats://a b@host", "redis://host:4222");
    private static final List<String> BAD_TTLS = List.of("soon", "0s", "1ms", "99ms", "25h", "-1s", "1.5s", "");

    /** A command's valid options, and for each option the bad values to try in its place. */
    public record Command(List<String> name, Map<String, String> valid, Map<String, List<String>> bad, List<List<String>> badFlags) {
    }

    /** The commands under test; a module that adds commands extends this class and returns its own. */
    protected List<Command> commands() {
        Map<String, String> urls = Map.of("--db-url", DB, "--redis-url", REDIS, "--gateway-url", "http://127.0.0.1:1");
        List<Command> out = new ArrayList<>();
        out.add(new Command(List.of("seed"), ordered("--merchant", MERCHANT, "--refunds", "5", "--total", "10.00", "--db-url", DB),
                Map.of("--merchant", BAD_MERCHANTS, "--refunds", List.of("0", "-1", "1000001", "x", "1.5", "99999999999"),
                        "--total", List.of("ten", "10.001", "-1", "0", "1e999999999", "99999999999999999999", "0.01", "NaN", "1e-5"),
                        "--currency", List.of("eur", "EU", "EURO", "12$"),
                        "--id-prefix", List.of("a b", "x".repeat(41), "é", "a;b"),
                        "--db-url", BAD_DB_URLS),
                List.of()));
        out.add(new Command(List.of("settle"), with(urls, "--merchant", MERCHANT, "--ttl", "30s", "--concurrency", "1"),
                Map.of("--merchant", BAD_MERCHANTS, "--ttl", BAD_TTLS, "--concurrency", List.of("0", "257", "x", "-4"),
                        "--db-url", BAD_DB_URLS, "--redis-url", BAD_REDIS_URLS, "--gateway-url", BAD_GATEWAY_URLS),
                List.of(List.of("--no-fence"))));
        out.add(new Command(List.of("worker"), with(Map.of("--db-url", DB, "--redis-url", REDIS, "--gateway-url", "http://127.0.0.1:1",
                        "--nats-url", "nats://127.0.0.1:1"), "--jobs", "2", "--concurrency", "2", "--ttl", "30s", "--ack-wait", "30s"),
                Map.of("--jobs", List.of("0", "65", "x"), "--concurrency", List.of("0", "257"), "--ttl", BAD_TTLS,
                        "--ack-wait", List.of("x", "0s", "2h"), "--max-deliver", List.of("0", "1001", "x"), "--stream", List.of("a b", "x.y", ""),
                        "--nats-url", BAD_NATS_URLS, "--db-url", BAD_DB_URLS, "--redis-url", BAD_REDIS_URLS, "--gateway-url", BAD_GATEWAY_URLS),
                List.of()));
        out.add(new Command(List.of("enqueue"), ordered("--merchant", MERCHANT, "--nats-url", "nats://127.0.0.1:1"),
                Map.of("--merchant", BAD_MERCHANTS, "--batch", List.of("a b", "x".repeat(65)), "--nats-url", BAD_NATS_URLS), List.of()));
        out.add(new Command(List.of("requeue"), ordered("--nats-url", "nats://127.0.0.1:1"),
                Map.of("--nats-url", BAD_NATS_URLS, "--stream", List.of("a b", "x.y", "")), List.of()));
        out.add(new Command(List.of("status"), ordered("--merchant", MERCHANT, "--db-url", DB, "--redis-url", REDIS),
                Map.of("--merchant", BAD_MERCHANTS, "--db-url", BAD_DB_URLS, "--redis-url", BAD_REDIS_URLS), List.of()));
        out.add(new Command(List.of("reconcile"), with(urls, "--merchant", MERCHANT, "--ttl", "30s"),
                Map.of("--merchant", BAD_MERCHANTS, "--ttl", BAD_TTLS, "--db-url", BAD_DB_URLS, "--gateway-url", BAD_GATEWAY_URLS),
                List.of(List.of("--retry-failed"))));
        out.add(new Command(List.of("gateway"), ordered("--port", "0", "--latency", "1ms"),
                Map.of("--port", List.of("-1", "70000", "x"), "--latency", List.of("fast", "-1s"), "--fail-before", List.of("2", "-0.5", "x"),
                        "--fail-after", List.of("1.5", "x"), "--refuse-above", List.of("0", "-1", "1.001", "x", "1e20"),
                        "--down-for", List.of("x", "-1s")),
                List.of()));
        return out;
    }

    protected static Map<String, String> ordered(String... pairs) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            map.put(pairs[i], pairs[i + 1]);
        }
        return map;
    }

    private static Map<String, String> with(Map<String, String> urls, String... pairs) {
        Map<String, String> map = ordered(pairs);
        map.putAll(urls);
        return map;
    }

    @Provide
    Arbitrary<List<String>> badInvocations() {
        List<Arbitrary<List<String>>> each = new ArrayList<>();
        for (Command command : commands()) {
            for (Map.Entry<String, List<String>> option : command.bad().entrySet()) {
                each.add(Combinators.combine(Arbitraries.of(option.getValue()), Arbitraries.of(true, false))
                        .as((value, equalsForm) -> invocation(command, option.getKey(), value, equalsForm)));
            }
            for (List<String> flags : command.badFlags()) {
                each.add(Arbitraries.just(invocation(command, null, null, false, flags)));
            }
        }
        return Arbitraries.oneOf(each);
    }

    private static List<String> invocation(Command command, String option, String value, boolean equalsForm) {
        return invocation(command, option, value, equalsForm, List.of());
    }

    private static List<String> invocation(Command command, String option, String value, boolean equalsForm, List<String> extra) {
        List<String> args = new ArrayList<>(command.name());
        Map<String, String> options = new LinkedHashMap<>(command.valid());
        if (option != null) {
            options.put(option, value);
        }
        options.forEach((name, v) -> {
            if (equalsForm) {
                args.add(name + "=" + v);
            } else {
                args.add(name);
                args.add(v);
            }
        });
        args.addAll(extra);
        return args;
    }

    @Property(tries = 150)
    void everyBadValueIsOneLineExit2AndWritesNothing(@ForAll("badInvocations") List<String> args) throws Exception {
        String before = snapshot();
        CliRun run;
        try {
            run = CompletableFuture.supplyAsync(() -> CliRun.of(args)).get(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("still running after 60 s, as if the input had been accepted: " + args, e);
        }
        assertThat(run.exit()).as("%s%n%s", args, run.both()).isEqualTo(FencedCli.USAGE);
        assertThat(run.oneLineError()).as("%s%n%s", args, run.stderr()).isTrue();
        assertThat(run.stdout()).as("%s", args).isEmpty();
        assertThat(snapshot()).as("nothing written by %s", args).isEqualTo(before);
    }

    /** The refund table, the token counters and the fuzz merchant's Redis keys, as one comparable text. */
    private static String snapshot() throws Exception {
        StringBuilder out = new StringBuilder();
        try (Connection c = DriverManager.getConnection(DB); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT (SELECT COUNT(*) FROM refund), (SELECT COALESCE(MAX(updated_at)::text, '') FROM refund),"
                     + " (SELECT COUNT(*) FROM fence_counter), (SELECT COALESCE(SUM(value), 0) FROM fence_counter)")) {
            rs.next();
            for (int i = 1; i <= 4; i++) {
                out.append(rs.getString(i)).append('|');
            }
        }
        try (RedisClient client = RedisClient.create(REDIS); StatefulRedisConnection<String, String> redis = client.connect()) {
            out.append(redis.sync().keys("*" + MERCHANT + "*"));
        }
        return out.toString();
    }
}
