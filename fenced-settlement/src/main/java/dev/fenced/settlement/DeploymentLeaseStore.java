package dev.fenced.settlement;

import dev.fenced.Lease;
import dev.fenced.LeaseStore;
import dev.fenced.LeaseView;
import dev.fenced.StoreUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * The lease store a deployment's workers use (e.g. {@code redis}, {@code database}, {@code etcd}),
 * recorded beside its id in {@value RefundOwner#TABLE}. A lease in one store does not keep out a
 * holder of another, and tokens of different stores do not order: two workers of one deployment on
 * two stores could hold a merchant at once with tokens that collide. The first process records its
 * choice; a process with another one is refused before it takes a lease, and, through
 * {@link #checking}, before every later lease too, so a switch stops the workers of the old store
 * at their next acquisition.
 *
 * <p>A switch is deliberate and in three steps: {@link #beginSwitch} (every acquisition is refused
 * from then on), raise the new store's tokens above the stored fences, {@link #switchTo}. Does not
 * guarantee that a process checks: one that never calls {@link #requireSame} (an application of
 * its own) is not stopped; nor that the recorded store is the same server, only the same kind.
 */
public final class DeploymentLeaseStore {
    private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9-]{0,15}");
    /** What the record holds while a switch is under way: this prefix and the store switched to. */
    static final String SWITCHING = "switching:";
    /** The bound on each statement: they wait only for another writer of the one deployment row. */
    private static final int WAIT_SECONDS = 10;

    private DeploymentLeaseStore() {
    }

    /**
     * Records {@code store} when the deployment has no store recorded yet, and returns; refuses it
     * when another is recorded or a switch is under way.
     *
     * @throws LeaseStoreMismatchException when the deployment's recorded store is another, or a switch is under way
     * @throws IllegalStateException when the database has no deployment (not migrated)
     */
    public static void requireSame(DataSource db, String store) {
        requireName(store);
        String recorded = write(db, "UPDATE " + RefundOwner.TABLE + " SET lease_store = ? WHERE lease_store IS NULL", store, true)
                .orElseThrow(() -> new IllegalStateException("the database has no " + RefundOwner.TABLE
                        + " row: create the schema with fenced migrate"));
        if (!recorded.equals(store)) {
            throw new LeaseStoreMismatchException(recorded, store);
        }
    }

    /**
     * {@code store} with the deployment's check before every acquisition: a worker whose deployment
     * was switched away from its store takes no new lease ({@link LeaseStoreMismatchException}).
     * One read of one row per acquisition, no write.
     */
    public static LeaseStore checking(LeaseStore store, DataSource db, String name) {
        requireName(name);
        return new LeaseStore() {
            @Override
            public Optional<Lease> tryAcquire(String resource, Duration ttl) {
                // A read only, on every acquisition: the record was written when the store was opened.
                String recorded = recorded(db).orElse(null);
                if (recorded == null) {
                    requireSame(db, name); // cleared by hand since: record it again, as a first process would
                } else if (!recorded.equals(name)) {
                    throw new LeaseStoreMismatchException(recorded, name);
                }
                return store.tryAcquire(resource, ttl);
            }

            @Override
            public void observeStoredFence(String resource, long storedFence) {
                store.observeStoredFence(resource, storedFence);
            }

            @Override
            public LeaseView view(String resource) {
                return store.view(resource);
            }

            @Override
            public String toString() {
                return store + " (the deployment's, checked)";
            }
        };
    }

    /** The recorded store, empty when none is recorded yet (or the database was not migrated). */
    public static Optional<String> recorded(DataSource db) {
        try (Connection c = db.getConnection()) {
            return read(c);
        } catch (SQLException e) {
            if ("42P01".equals(e.getSQLState()) || "42S02".equals(e.getSQLState()) || "42703".equals(e.getSQLState())
                    || "42S22".equals(e.getSQLState())) {
                return Optional.empty(); // no table or no column yet: nothing recorded
            }
            throw new StoreUnavailableException("could not read the deployment's lease store: " + e.getMessage(), e);
        }
    }

    /** The store a switch under way goes to, when the record says one is. */
    public static Optional<String> switchingTo(String recorded) {
        return recorded != null && recorded.startsWith(SWITCHING) ? Optional.of(recorded.substring(SWITCHING.length())) : Optional.empty();
    }

    /** The first step of a switch to {@code store}: from now on every acquisition, in any store, is refused. */
    public static void beginSwitch(DataSource db, String store) {
        requireName(store);
        record(db, SWITCHING + store);
    }

    /** Records {@code store} whatever was recorded before: the last step of a deliberate switch. */
    public static void switchTo(DataSource db, String store) {
        requireName(store);
        record(db, store);
    }

    private static void record(DataSource db, String value) {
        if (write(db, "UPDATE " + RefundOwner.TABLE + " SET lease_store = ?", value, false).isEmpty()) {
            throw new IllegalStateException("the database has no " + RefundOwner.TABLE + " row: create the schema with fenced migrate");
        }
    }

    /**
     * Runs {@code update} with {@code value}, committed whatever the pool's commit mode, and returns
     * what is recorded after it (empty without a deployment row); each statement bounded.
     */
    private static Optional<String> write(DataSource db, String update, String value, boolean readBack) {
        try (Connection c = db.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            try (PreparedStatement s = c.prepareStatement(update)) {
                s.setQueryTimeout(WAIT_SECONDS);
                s.setString(1, value);
                int rows = s.executeUpdate();
                if (!autoCommit) {
                    c.commit(); // a pool that hands out connections in a transaction would roll the record back on close
                }
                if (!readBack) {
                    return rows == 0 ? Optional.empty() : Optional.of(value);
                }
            }
            return read(c);
        } catch (SQLException e) {
            throw new StoreUnavailableException("could not record the deployment's lease store: " + e.getMessage(), e);
        }
    }

    private static Optional<String> read(Connection c) throws SQLException {
        try (PreparedStatement read = c.prepareStatement("SELECT lease_store FROM " + RefundOwner.TABLE + " ORDER BY id")) {
            read.setQueryTimeout(WAIT_SECONDS);
            try (ResultSet rs = read.executeQuery()) {
                return rs.next() ? Optional.ofNullable(rs.getString(1)) : Optional.empty();
            }
        }
    }

    private static void requireName(String store) {
        if (store == null || !NAME.matcher(store).matches()) {
            throw new IllegalArgumentException("a lease store's name is 1 to 16 lower-case letters, digits or -, got '" + store + "'");
        }
    }
}
