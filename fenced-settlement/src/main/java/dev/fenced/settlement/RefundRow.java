package dev.fenced.settlement;

import dev.fenced.jdbc.JdbcDialect;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * A refund row as the worker read it: what is sent to the gateway, under which key, its state then,
 * the deployment its database belongs to, and when its first request may have gone out.
 *
 * @param firstAttemptAt the first claim into {@code sending}, on the worker's clock (the database
 *     stamps it on its own; the age read from it is moved onto the worker's clock); null when the
 *     row was never claimed
 */
record RefundRow(String id, String merchant, BigDecimal amount, String currency, String idempotencyKey, String state, String deployment,
                 Instant firstAttemptAt) {
    RefundRow(String id, String merchant, BigDecimal amount, String currency, String idempotencyKey, String state, String deployment) {
        this(id, merchant, amount, currency, idempotencyKey, state, deployment, null);
    }

    boolean pending() {
        return state.equals("pending");
    }

    /** Whose a refund for this row is: sent with it as metadata, checked on every refund found under its key. */
    RefundOwner owner() {
        return new RefundOwner(deployment, merchant, id);
    }

    /** This row with its amount written as {@code amount}. */
    RefundRow withAmount(BigDecimal amount) {
        return new RefundRow(id, merchant, amount, currency, idempotencyKey, state, deployment, firstAttemptAt);
    }

    /**
     * The merchant's rows still to settle, pending or sending, in their order. The age of each
     * row's first attempt is measured on the database's clock, which stamped it, and placed on
     * {@code clock}: the two clocks need not agree.
     *
     * @throws IllegalStateException when the database has no deployment id: it was not migrated
     */
    static List<RefundRow> unsettled(DataSource dataSource, String merchant, Clock clock) throws SQLException {
        List<RefundRow> rows = new ArrayList<>();
        try (Connection connection = dataSource.getConnection();
             PreparedStatement statement = connection.prepareStatement(
                     "SELECT id, merchant, amount, currency, idempotency_key, state, " + firstAttemptAgeMillis(connection) + " FROM refund"
                             + " WHERE merchant = ? AND state IN ('pending', 'sending') ORDER BY seq")) {
            String deployment = RefundOwner.deploymentOf(connection);
            if (deployment == null) {
                throw new IllegalStateException("the database has no deployment id (table " + RefundOwner.TABLE
                        + "): migrate it (RefundSchema.migrate, fenced migrate)");
            }
            statement.setString(1, merchant);
            try (ResultSet rs = statement.executeQuery()) {
                Instant now = clock.instant();
                while (rs.next()) {
                    double ageMillis = rs.getDouble(7);
                    Instant firstAttemptAt = rs.wasNull() ? null : now.minus(Duration.ofMillis(Math.max(0, (long) ageMillis)));
                    rows.add(new RefundRow(rs.getString(1), rs.getString(2), rs.getBigDecimal(3), rs.getString(4), rs.getString(5),
                            rs.getString(6), deployment, firstAttemptAt));
                }
            }
        }
        return rows;
    }

    /**
     * The age of a row's first attempt in milliseconds, computed by the database from instants, never
     * from local times: MariaDB hands TIMESTAMP values to the driver in the session's zone, where an
     * hour repeats when daylight saving ends.
     */
    static String firstAttemptAgeMillis(Connection connection) throws SQLException {
        return ageMillis(connection, "first_attempt_at");
    }

    /**
     * The age of a timestamp column of refund in milliseconds, by the database's clock, as
     * {@link #firstAttemptAgeMillis}; on MariaDB to the second (its current time read as a whole
     * Unix second, the one form that does not pass through the session's zone).
     */
    static String ageMillis(Connection connection, String column) throws SQLException {
        return JdbcDialect.detect(connection).name().equals("postgresql")
                ? "EXTRACT(EPOCH FROM (CURRENT_TIMESTAMP - " + column + ")) * 1000"
                : "(UNIX_TIMESTAMP() - UNIX_TIMESTAMP(" + column + ")) * 1000";
    }

    /** The merchant's confirmed refunds (sent, and since settled or returned by the provider), as the journal lines they should have: the token is the row's fence, the token that confirmed it. */
    static List<JournalLine> confirmed(DataSource dataSource, String merchant) throws SQLException {
        List<JournalLine> lines = new ArrayList<>();
        try (Connection connection = dataSource.getConnection();
             PreparedStatement statement = connection.prepareStatement(
                     "SELECT id, amount, currency, gateway_reference, fence FROM refund WHERE merchant = ?"
                             + " AND state IN ('sent', 'settled', 'returned') ORDER BY seq")) {
            statement.setString(1, merchant);
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    lines.add(new JournalLine(0, merchant, rs.getString(1), rs.getBigDecimal(2), rs.getString(3), rs.getString(4), rs.getLong(5), 0));
                }
            }
        }
        return lines;
    }

    /**
     * The gateway reference each of {@code ids} holds now (absent for a row without one), read
     * within {@code waitSeconds} ({@link java.sql.Statement#setQueryTimeout}; 0: no bound of its own).
     */
    static Map<String, String> gatewayReferences(Connection connection, List<String> ids, long waitSeconds) throws SQLException {
        Map<String, String> references = new HashMap<>();
        try (PreparedStatement statement = connection.prepareStatement("SELECT id, gateway_reference FROM refund WHERE id IN ("
                + String.join(", ", Collections.nCopies(ids.size(), "?")) + ")")) {
            if (waitSeconds > 0) {
                statement.setQueryTimeout(Math.toIntExact(waitSeconds));
            }
            for (int i = 0; i < ids.size(); i++) {
                statement.setString(i + 1, ids.get(i));
            }
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    if (rs.getString(2) != null) {
                        references.put(rs.getString(1), rs.getString(2));
                    }
                }
            }
        }
        return references;
    }
}
