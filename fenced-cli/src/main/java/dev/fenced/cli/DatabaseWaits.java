package dev.fenced.cli;

import com.zaxxer.hikari.HikariConfig;
import dev.fenced.internal.Durations;
import dev.fenced.jdbc.JdbcDialect;
import dev.fenced.jdbc.MariaDbDialect;
import dev.fenced.jdbc.PostgresDialect;
import java.time.Duration;
import java.util.Objects;

/**
 * The bounds on every wait a command's database connections make: a row lock another session
 * holds, a statement's time, the driver's socket and connect. Zero leaves a bound to the server
 * (lock and statement) or the driver (socket: none). Immutable; checked when built.
 *
 * <p>A holder stalled inside its transaction (a frozen process, a hung connection, a partition)
 * keeps its row locks; without a lock bound the next holder's claim waits for it with no end while
 * its own lease is renewed and its job heartbeats. With one, the claim gives up after the bound
 * ({@code DatabaseWaitException}) and the run ends as {@code DATABASE_WAIT}.
 *
 * @param lockTimeout the longest wait for a lock ({@code lock_timeout}, {@code innodb_lock_wait_timeout}: whole seconds)
 * @param statementTimeout the longest a statement runs, its lock waits included ({@code statement_timeout}, {@code max_statement_time})
 * @param socketTimeout the longest the driver waits for the database to send anything ({@code socketTimeout}: whole seconds on PostgreSQL)
 */
public record DatabaseWaits(Duration lockTimeout, Duration statementTimeout, Duration socketTimeout) {
    /** The drivers' connect timeout, the pool's own wait for a connection. */
    public static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

    /** No bound of fenced's own: each is the server's or the driver's default. */
    public static final DatabaseWaits SERVER_DEFAULTS = new DatabaseWaits(Duration.ZERO, Duration.ZERO, Duration.ZERO);

    public DatabaseWaits {
        Objects.requireNonNull(lockTimeout, "lockTimeout");
        Objects.requireNonNull(statementTimeout, "statementTimeout");
        Objects.requireNonNull(socketTimeout, "socketTimeout");
        if (lockTimeout.isNegative() || statementTimeout.isNegative() || socketTimeout.isNegative()) {
            throw new IllegalArgumentException("database wait bounds must not be negative");
        }
        // A lock wait is part of its statement, and a statement's time ends before the driver stops
        // listening: otherwise the wider bound fires first, with a vaguer reason.
        requireBelow(lockTimeout, "--lock-timeout", statementTimeout, "--statement-timeout");
        requireBelow(lockTimeout, "--lock-timeout", socketTimeout, "--db-socket-timeout");
        requireBelow(statementTimeout, "--statement-timeout", socketTimeout, "--db-socket-timeout");
    }

    /**
     * The defaults for a lease of {@code ttl}: a lock wait of a third of it (10 s for the article's
     * 30 s), well inside the lease, so that a claim behind a stalled holder gives up while its own
     * lease is safe; a statement of two thirds; the socket one TTL.
     */
    public static DatabaseWaits forTtl(Duration ttl) {
        return new DatabaseWaits(ttl.dividedBy(3), ttl.multipliedBy(2).dividedBy(3), ttl);
    }

    /** Sets the bounds on a pool's connections to {@code jdbcUrl} (PostgreSQL or MariaDB). */
    void applyTo(HikariConfig config, String jdbcUrl) {
        boolean postgres = jdbcUrl.startsWith("jdbc:postgresql:");
        JdbcDialect dialect = postgres ? PostgresDialect.INSTANCE : MariaDbDialect.INSTANCE;
        dialect.boundWaits(lockTimeout, statementTimeout).ifPresent(config::setConnectionInitSql);
        // pgjdbc counts whole seconds, MariaDB's driver milliseconds; a URL's own setting wins over these.
        config.addDataSourceProperty("connectTimeout", postgres ? Long.toString(CONNECT_TIMEOUT.toSeconds())
                : Long.toString(CONNECT_TIMEOUT.toMillis()));
        if (!socketTimeout.isZero()) {
            config.addDataSourceProperty("socketTimeout", postgres ? Long.toString(Math.max(1, (socketTimeout.toMillis() + 999) / 1000))
                    : Long.toString(socketTimeout.toMillis()));
        }
    }

    private static void requireBelow(Duration lower, String lowerName, Duration upper, String upperName) {
        if (!lower.isZero() && !upper.isZero() && lower.compareTo(upper) >= 0) {
            throw new UsageException(lowerName + " (" + Durations.human(lower) + ") must be below " + upperName + " ("
                    + Durations.human(upper) + ")");
        }
    }
}
