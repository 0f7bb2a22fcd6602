package dev.fenced.settlement;

import dev.fenced.StoreUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * The lease store a deployment's workers use (e.g. {@code redis}, {@code database}, {@code etcd}),
 * recorded beside its id in {@value RefundOwner#TABLE}. A lease in one store does not keep out a
 * holder of another, and tokens of different stores do not order: two workers of one deployment on
 * two stores could hold a merchant at once with tokens that collide. The first process records its
 * choice; a process with another one is refused before it takes a lease.
 *
 * <p>Does not guarantee that a process checks: one that never calls {@link #requireSame} (an
 * application of its own) is not stopped. A switch is deliberate ({@link #switchTo}), while no
 * worker runs.
 */
public final class DeploymentLeaseStore {
    private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9-]{0,15}");

    private DeploymentLeaseStore() {
    }

    /**
     * Records {@code store} when the deployment has no store recorded yet, and returns; refuses it
     * when another is recorded.
     *
     * @throws LeaseStoreMismatchException when the deployment's recorded store is another
     * @throws IllegalStateException when the database has no deployment (not migrated)
     */
    public static void requireSame(DataSource db, String store) {
        requireName(store);
        try (Connection c = db.getConnection()) {
            try (PreparedStatement record = c.prepareStatement("UPDATE " + RefundOwner.TABLE + " SET lease_store = ? WHERE lease_store IS NULL")) {
                record.setString(1, store);
                record.executeUpdate();
            }
            String recorded = read(c).orElseThrow(() -> new IllegalStateException(
                    "the database has no " + RefundOwner.TABLE + " row: create the schema with fenced migrate"));
            if (!recorded.equals(store)) {
                throw new LeaseStoreMismatchException(recorded, store);
            }
        } catch (SQLException e) {
            throw new StoreUnavailableException("could not read the deployment's lease store: " + e.getMessage(), e);
        }
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

    /** Records {@code store} whatever was recorded before: a deliberate switch, made while no worker runs. */
    public static void switchTo(DataSource db, String store) {
        requireName(store);
        try (Connection c = db.getConnection();
             PreparedStatement update = c.prepareStatement("UPDATE " + RefundOwner.TABLE + " SET lease_store = ?")) {
            update.setString(1, store);
            if (update.executeUpdate() == 0) {
                throw new IllegalStateException("the database has no " + RefundOwner.TABLE + " row: create the schema with fenced migrate");
            }
        } catch (SQLException e) {
            throw new StoreUnavailableException("could not record the deployment's lease store: " + e.getMessage(), e);
        }
    }

    private static Optional<String> read(Connection c) throws SQLException {
        try (PreparedStatement read = c.prepareStatement("SELECT lease_store FROM " + RefundOwner.TABLE + " ORDER BY id");
             ResultSet rs = read.executeQuery()) {
            return rs.next() ? Optional.ofNullable(rs.getString(1)) : Optional.empty();
        }
    }

    private static void requireName(String store) {
        if (store == null || !NAME.matcher(store).matches()) {
            throw new IllegalArgumentException("a lease store's name is 1 to 16 lower-case letters, digits or -, got '" + store + "'");
        }
    }
}
