package dev.fenced.jdbc;

import dev.fenced.FencedException;
import dev.fenced.FencedObserver;
import dev.fenced.FencedObserver.AcquireOutcome;
import dev.fenced.FencedObserver.RenewalOutcome;
import dev.fenced.Lease;
import dev.fenced.LeaseArguments;
import dev.fenced.LeaseStore;
import dev.fenced.LeaseView;
import dev.fenced.internal.Redaction;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * A {@link LeaseStore} in the application's own database (PostgreSQL or MariaDB, detected), for
 * teams without Redis: one row per resource in {@value #DEFAULT_TABLE} (migration V7 of
 * {@link FencedSchema}) holds the holder, its expiry and the highest token granted, drawn from
 * {@value JdbcSequenceTokenSource#DEFAULT_SEQUENCE}, the sequence of {@link JdbcSequenceTokenSource}:
 * a deployment that moves between this store and database-issued tokens never sees a token go back.
 *
 * <p>Guarantees: while a lease is live by the database's clock no other is granted for its
 * resource, and the resource's tokens strictly increase in grant order and never repeat, under any
 * race: a release ends the lease and keeps the row with its token, and a takeover is refused unless
 * the stored token is below the new one (an acquirer whose token was drawn before a faster one's
 * loses, as to contention, and gets empty: another holder was granted the lease meanwhile, and the
 * caller's retry decides, as for any busy lease). No client clock takes part: the client binds
 * TTLs, never instants. Each write is one auto-committed statement, so a failure leaves no
 * half-written row. Does not guarantee: exclusivity across a failover to a replica that had not
 * received the grant (the fence still holds), nor anything about a database whose clock jumps.
 *
 * <p>Every attempt draws one value from the sequence, granted or not (PostgreSQL draws it in the
 * upsert's VALUES, MariaDB before its takeover UPDATE): a resource's tokens rise but are far from
 * consecutive. An acquisition is one round trip on PostgreSQL; on MariaDB, which returns nothing from
 * an upsert, two or three auto-committed statements (draw, takeover UPDATE, INSERT IGNORE).
 *
 * <p>Every statement is bounded by {@link Builder#statementTimeout}; getting a connection is
 * bounded by the DataSource (a pool's connection timeout, a driver's connect timeout). An error
 * that means the database is unreachable is a {@link dev.fenced.StoreUnavailableException}, a bound
 * that ran out a {@link DatabaseWaitException}, anything else a {@link FencedDataAccessException};
 * each names the table and the database without secrets.
 *
 * <p>Thread-safe; it keeps no connection of its own, and needs nothing closed.
 */
public final class JdbcLeaseStore implements LeaseStore {
    public static final String DEFAULT_TABLE = "fence_lease";

    private final DataSource dataSource;
    private final String table;
    private final String ownerLabel;
    private final FencedObserver observer;
    private final Duration statementTimeout;
    private final boolean tokenGuard;
    private final DetectedDialect detected = new DetectedDialect();
    private volatile LeaseSql sql;
    /** The database as the first connection named it (its URL, described without secrets); null until then. */
    private volatile String database;

    private JdbcLeaseStore(Builder b) {
        this.dataSource = b.dataSource;
        this.table = b.table;
        this.ownerLabel = b.ownerLabel;
        this.observer = b.observer;
        this.statementTimeout = b.statementTimeout;
        this.tokenGuard = b.tokenGuard;
    }

    /** Starts a builder for a store on {@code dataSource}; its connections may come in either commit mode. */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    @Override
    public Optional<Lease> tryAcquire(String resource, Duration ttl) {
        LeaseArguments.requireValidResource(resource);
        long ttlMillis = LeaseArguments.requireValidTtl(ttl).toMillis();
        String ownerId = newOwnerId();
        long started = System.nanoTime();
        long token;
        try {
            token = run("acquiring the lease on " + resource, (c, statements) -> statements.acquire(c, resource, ownerId, ttlMillis));
        } catch (RuntimeException e) {
            observer.acquired(resource, AcquireOutcome.ERROR, 0, Duration.ofNanos(System.nanoTime() - started));
            throw e;
        }
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        if (token == 0) {
            observer.acquired(resource, AcquireOutcome.BUSY, 0, took);
            return Optional.empty();
        }
        observer.acquired(resource, AcquireOutcome.GRANTED, token, took);
        return Optional.of(new JdbcLease(resource, token, ownerId));
    }

    /**
     * Raises {@value JdbcSequenceTokenSource#DEFAULT_SEQUENCE} above a fence a refused write revealed.
     * The sequence never goes back, so in a deployment that has only ever issued tokens from it this
     * changes nothing; but one that switched from Redis-issued tokens without
     * {@link JdbcSequenceTokenSource#raiseAbove raising} it first would otherwise be refused on every
     * write until the sequence caught up. Never lowers it.
     */
    @Override
    public void observeStoredFence(String resource, long storedFence) {
        LeaseArguments.requireValidResource(resource);
        if (storedFence <= 0) {
            return;
        }
        run("raising " + JdbcSequenceTokenSource.DEFAULT_SEQUENCE + " above the fence " + storedFence + " of " + resource, (c, statements) -> {
            detected.of(c).raiseSequenceAbove(c, statements.sequence, storedFence);
            return null;
        });
        observer.counterRaised(resource, storedFence);
    }

    /** The row's holder while its lease is live, its time left by the database's clock, and the token stored (the highest granted). */
    @Override
    public LeaseView view(String resource) {
        LeaseArguments.requireValidResource(resource);
        LeaseSql.Row row = run("reading the lease on " + resource, (c, statements) -> statements.view(c, resource));
        return new LeaseView(resource, row.holder(), Duration.ofNanos(Math.multiplyExact(row.microsLeft(), 1000L)), row.token());
    }

    /** The table this store keeps its leases in. */
    public String table() {
        return table;
    }

    @Override
    public String toString() {
        return "JdbcLeaseStore[" + table + " at " + database() + "]";
    }

    /** The URL the first connection reported, else the DataSource as it names itself, which may hold a URL: either without secrets. */
    private String database() {
        String known = database;
        if (known != null) {
            return known;
        }
        try {
            return Redaction.redactUri(String.valueOf(dataSource));
        } catch (RuntimeException proxyWithoutToString) {
            return dataSource.getClass().getName();
        }
    }

    private String newOwnerId() {
        return LeaseArguments.newOwnerId(ownerLabel);
    }

    /** Work on one connection in auto-commit, with the statements of its dialect. */
    private interface Work<T> {
        T run(Connection connection, LeaseSql statements) throws SQLException;
    }

    private <T> T run(String what, Work<T> work) {
        JdbcDialect dialect = null;
        try (Connection connection = dataSource.getConnection()) {
            dialect = detected.of(connection);
            LeaseSql statements = statements(dialect, connection);
            boolean autoCommit = connection.getAutoCommit();
            if (!autoCommit) {
                connection.setAutoCommit(true);
            }
            try {
                return work.run(connection, statements);
            } finally {
                if (!autoCommit) {
                    restoreManualCommit(connection);
                }
            }
        } catch (SQLException e) {
            throw translate(dialect, what, e);
        }
    }

    private LeaseSql statements(JdbcDialect dialect, Connection connection) throws SQLException {
        LeaseSql known = sql;
        if (known == null) {
            database = Redaction.describe(connection.getMetaData().getURL());
            known = LeaseSql.of(dialect, table, JdbcSequenceTokenSource.DEFAULT_SEQUENCE, tokenGuard, statementTimeout);
            sql = known;
        }
        return known;
    }

    private FencedException translate(JdbcDialect dialect, String what, SQLException e) {
        FencedException translated = SqlErrors.translate(dialect, what + " in " + table + " at " + database(), e);
        if (translated.getClass() == FencedDataAccessException.class && missingTable(e)) {
            return new FencedDataAccessException(translated.getMessage() + " (the lease table is made by FencedSchema.migrate,"
                    + " migration V7; a table of your own needs its columns and primary key)", e);
        }
        return translated;
    }

    /** PostgreSQL 42P01 undefined_table; MariaDB 1146 ER_NO_SUCH_TABLE. */
    private static boolean missingTable(SQLException e) {
        return "42P01".equals(e.getSQLState()) || e.getErrorCode() == 1146;
    }

    /** A connection that cannot take it back is broken, and its pool discards it; the statement was committed already. */
    private static void restoreManualCommit(Connection connection) {
        try {
            connection.setAutoCommit(false);
        } catch (SQLException brokenConnection) {
            // the statement's answer is the caller's, not this
        }
    }

    /** A lease granted by this store; renew, release and isHeld match its row by owner id and token. */
    private final class JdbcLease implements Lease {
        private final String resource;
        private final long token;
        private final String ownerId;

        JdbcLease(String resource, long token, String ownerId) {
            this.resource = resource;
            this.token = token;
            this.ownerId = ownerId;
        }

        @Override
        public String resource() {
            return resource;
        }

        @Override
        public long token() {
            return token;
        }

        @Override
        public String ownerId() {
            return ownerId;
        }

        @Override
        public boolean renew(Duration ttl) {
            long ttlMillis = LeaseArguments.requireValidTtl(ttl).toMillis();
            boolean renewed;
            try {
                renewed = run("renewing the lease on " + resource, (c, statements) -> statements.renew(c, resource, ownerId, token, ttlMillis));
            } catch (RuntimeException e) {
                observer.renewed(resource, token, RenewalOutcome.ERROR);
                throw e;
            }
            observer.renewed(resource, token, renewed ? RenewalOutcome.RENEWED : RenewalOutcome.LOST);
            return renewed;
        }

        @Override
        public boolean isHeld() {
            return run("checking the lease on " + resource, (c, statements) -> statements.isHeld(c, resource, ownerId, token));
        }

        /** Ends the lease and keeps the row: its token is the floor the next holder's must be above. */
        @Override
        public boolean release() {
            return run("releasing the lease on " + resource, (c, statements) -> statements.release(c, resource, ownerId, token));
        }

        @Override
        public String toString() {
            return "Lease[" + resource + ", token " + token + ", owner " + ownerId + "]";
        }
    }

    /** Configures a {@link JdbcLeaseStore}; {@link #build()} connects to nothing, the first call does. */
    public static final class Builder {
        private final DataSource dataSource;
        private String table = DEFAULT_TABLE;
        private String ownerLabel;
        private FencedObserver observer = FencedObserver.NONE;
        private Duration statementTimeout = Duration.ofSeconds(5);
        private boolean tokenGuard = true;

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /**
         * The lease table; {@value JdbcLeaseStore#DEFAULT_TABLE} unless set. The migration makes only
         * {@value JdbcLeaseStore#DEFAULT_TABLE}: a table of your own (for stores that must not share leases)
         * is yours to create, with the migration's columns and primary key. Its tokens still come
         * from the one sequence, so they stay in one space with every other table's.
         *
         * @throws IllegalArgumentException for a name that is not a plain, optionally schema-qualified identifier
         */
        public Builder table(String table) {
            this.table = SqlIdentifiers.table("lease table", table);
            return this;
        }

        /** A readable prefix for owner ids (e.g. a worker name), shown by status tools. */
        public Builder ownerLabel(String ownerLabel) {
            this.ownerLabel = LeaseArguments.requireValidResource(ownerLabel);
            return this;
        }

        /** Hears grants, refusals and renewals, for metrics. */
        public Builder observer(FencedObserver observer) {
            this.observer = FencedObserver.all(Objects.requireNonNull(observer, "observer"));
            return this;
        }

        /**
         * How long one statement may run, lock waits included, before it fails with
         * {@link DatabaseWaitException} (and does nothing); 5 s by default, counted in whole seconds
         * (JDBC's {@code setQueryTimeout}), a fraction rounded up.
         */
        public Builder statementTimeout(Duration statementTimeout) {
            Objects.requireNonNull(statementTimeout, "statementTimeout");
            if (statementTimeout.isNegative() || statementTimeout.isZero() || statementTimeout.compareTo(Duration.ofHours(1)) > 0) {
                throw new IllegalArgumentException("statement timeout must be positive and at most an hour, got " + statementTimeout);
            }
            this.statementTimeout = statementTimeout;
            return this;
        }

        /** Tests only: drops the {@code token < new token} guard, for the negative control that shows a token going back. */
        Builder withoutTokenGuard() {
            this.tokenGuard = false;
            return this;
        }

        public JdbcLeaseStore build() {
            return new JdbcLeaseStore(this);
        }
    }
}
