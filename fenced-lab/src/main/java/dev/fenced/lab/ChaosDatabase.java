package dev.fenced.lab;

import dev.fenced.embedded.EmbeddedPostgresServer;
import dev.fenced.embedded.PostgresPair;
import java.net.URI;
import java.util.Set;
import java.util.TreeSet;

/**
 * The chaos run's PostgreSQL: one embedded server, or, with {@link Fault#DB_FAILOVER}, a primary
 * and a streaming replica ({@link PostgresPair}, synchronous unless the run is the failover's
 * negative control) whose URLs name both, so that every client follows a failover to whichever
 * node is primary ({@code targetServerType=primary}).
 */
final class ChaosDatabase implements AutoCloseable {
    private final EmbeddedPostgresServer single;
    /** The replicated pair, or null on one server. */
    final PostgresPair pair;

    private ChaosDatabase(EmbeddedPostgresServer single, PostgresPair pair) {
        this.single = single;
        this.pair = pair;
    }

    static ChaosDatabase start(ChaosSettings settings) {
        return settings.faults().contains(Fault.DB_FAILOVER) ? new ChaosDatabase(null, PostgresPair.start(!settings.asyncReplication()))
                : new ChaosDatabase(EmbeddedPostgresServer.start(), null);
    }

    /** The {@code postgres} database. */
    String jdbcUrl() {
        return jdbcUrl("postgres");
    }

    /** A JDBC URL for {@code database} as user {@code postgres}; the database must exist. */
    String jdbcUrl(String database) {
        return pair != null ? pair.followingUrl(database) : single.jdbcUrl(database);
    }

    /** Every port a client of the database may use: what a partition from it cuts. */
    Set<Integer> ports() {
        if (pair != null) {
            return new TreeSet<>(pair.ports());
        }
        return Set.of(URI.create(single.jdbcUrl().substring("jdbc:".length())).getPort());
    }

    /** For the run's opening line. */
    String describe() {
        return pair == null ? "PostgreSQL: one server"
                : "PostgreSQL: a primary and " + (pair.synchronous() ? "a synchronous" : "an asynchronous (the control)") + " streaming replica";
    }

    @Override
    public void close() {
        if (pair != null) {
            pair.close();
        } else {
            single.close();
        }
    }
}
