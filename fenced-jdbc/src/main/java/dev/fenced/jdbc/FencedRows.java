package dev.fenced.jdbc;

import dev.fenced.FenceViolation;
import dev.fenced.FencedException;
import dev.fenced.FencedObserver;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * Fenced writes on one {@link FencedTable}: the database refuses a write whose token is stale.
 *
 * <ul>
 *   <li>{@link #claim}: pending (or claimed under a lower token) to claimed, fence := token,
 *       only while {@code fence < token}. Run it before the side effect.
 *   <li>{@link #confirm}: claimed to done, only while {@code fence = token}. Run it after.
 * </ul>
 *
 * <p>One row updated is success. Zero rows is a {@link FenceViolation} carrying what the row holds
 * now, or a {@link RowNotFoundException}. A violation means another holder owns the row: abandon
 * the batch, never retry. Serialization failures under REPEATABLE READ or SERIALIZABLE come out as
 * {@link SerializationConflictException}, never as a violation.
 *
 * <p>The methods that take a {@link Connection} work inside the caller's transaction and never
 * commit, roll back or change auto-commit. Correct at READ COMMITTED: PostgreSQL re-checks the
 * WHERE clause against the row a concurrent writer committed, InnoDB updates the latest committed
 * version. The fence protects this table only; a side effect elsewhere needs its own idempotency.
 *
 * <p>The first claim checks the table's shape ({@link SchemaCheck}: fence column {@code BIGINT NOT
 * NULL}, a unique id) and throws a {@link SchemaProblemException} listing what is wrong.
 *
 * <p>Immutable (but for that one check's result) and thread-safe.
 */
public final class FencedRows {
    /** Upper bound on ids in one batch claim, below every driver's parameter limit. */
    public static final int MAX_BATCH = 10_000;

    private final FencedTable table;
    private final Sql sql;
    private final JdbcDialect fixedDialect;
    private final FinishStatements finishStatements;
    private final RefusalReadBack readBack;
    private final RefusalReport refusalReport;
    /** Set once the table's shape passed {@link SchemaCheck}: the first claim checks it, later ones do not. */
    private volatile boolean schemaChecked;

    private FencedRows(FencedTable table, JdbcDialect dialect, FencedObserver observer) {
        this.refusalReport = new RefusalReport(FencedObserver.all(Objects.requireNonNull(observer, "observer")));
        this.table = Objects.requireNonNull(table, "table");
        if (!table.hasStates()) {
            throw new IllegalArgumentException(table.table() + " names no states: fenced rows move between them;"
                    + " give them with FencedTable.Builder.states(pending, claimed, done)");
        }
        this.sql = new Sql(table);
        this.fixedDialect = dialect;
        this.finishStatements = new FinishStatements(table, sql);
        this.readBack = new RefusalReadBack(table, sql);
    }

    /** Fenced writes on {@code table}, on connections to PostgreSQL or MariaDB: the database is recognised per connection. */
    public static FencedRows of(FencedTable table) {
        return new FencedRows(table, null, FencedObserver.NONE);
    }

    /**
     * Fenced writes on {@code table}, always with {@code dialect} (e.g. {@link PostgresDialect#INSTANCE}):
     * for an application that knows its database, and connections that never need to be asked.
     */
    public static FencedRows of(FencedTable table, JdbcDialect dialect) {
        return new FencedRows(table, Objects.requireNonNull(dialect, "dialect"), FencedObserver.NONE);
    }

    /** The same fenced writes, telling {@code observer} of every refusal (for metrics). */
    public FencedRows observedBy(FencedObserver observer) {
        return new FencedRows(table, fixedDialect, observer);
    }

    public FencedTable table() {
        return table;
    }

    /**
     * Moves the row to the claimed state under {@code token}.
     *
     * @throws FenceViolation when the row is fenced at or above the token, or is in another state
     * @throws RowNotFoundException when there is no such row
     */
    public void claim(Connection connection, Object id, long token) {
        requireId(id);
        Objects.requireNonNull(connection, "connection");
        checkSchemaOnce(connection);
        try (PreparedStatement statement = connection.prepareStatement(sql.claim)) {
            statement.setString(1, table.claimedState());
            statement.setLong(2, token);
            BatchParameters.value(statement, 3, id);
            statement.setString(4, table.pendingState());
            statement.setString(5, table.claimedState());
            statement.setLong(6, token);
            if (statement.executeUpdate() == 0) {
                throw refusal("claim", connection, id, token);
            }
        } catch (SQLException e) {
            throw SqlErrors.translate(dialectOrNull(connection), "claim of " + table.table() + " row " + id, e);
        }
    }

    /** Moves the row from claimed to done, only if it is still fenced at exactly {@code token}. */
    public void confirm(Connection connection, Object id, long token) {
        finish(connection, id, token, table.doneState(), Map.of());
    }

    /** {@link #confirm(Connection, Object, long)}, also setting {@code alsoSet} (e.g. a gateway reference). */
    public void confirm(Connection connection, Object id, long token, Map<String, ?> alsoSet) {
        finish(connection, id, token, table.doneState(), alsoSet);
    }

    /**
     * Moves a claimed row to {@code toState} (for example {@code failed}, with a reason in
     * {@code alsoSet}), only if it is still fenced at exactly {@code token}. Column names in
     * {@code alsoSet} are checked as identifiers; values are bound.
     */
    public void finish(Connection connection, Object id, long token, String toState, Map<String, ?> alsoSet) {
        requireId(id);
        Objects.requireNonNull(connection, "connection");
        FinishStatements.Finish finish = finishStatements.statement(toState, alsoSet.keySet());
        try (PreparedStatement statement = connection.prepareStatement(finish.sql())) {
            finishStatements.bind(statement, finish, toState, id, token, alsoSet);
            if (statement.executeUpdate() == 0) {
                throw refusal(operation(toState), connection, id, token);
            }
        } catch (SQLException e) {
            throw SqlErrors.translate(dialectOrNull(connection), "confirm of " + table.table() + " row " + id, e);
        }
    }

    /**
     * Confirms many claimed rows under one token: one JDBC batch, one round trip, each row checked
     * by its own fenced UPDATE. {@code alsoSetById} maps each id to the columns to set with it (the
     * same columns for every id, e.g. its gateway reference). Never throws for refused rows: it
     * says which were confirmed and why each other one was refused.
     *
     * <p>Runs in the caller's transaction like every method here: to pay one commit for the batch,
     * turn auto-commit off, call this, commit. A confirmed row stays confirmed when another row of
     * the batch is refused; the refusal still means this holder is stale: stop.
     */
    public BatchConfirm confirmAll(Connection connection, Map<?, ? extends Map<String, ?>> alsoSetById, long token) {
        return finishAll(connection, table.doneState(), alsoSetById, token);
    }

    /** {@link #confirmAll} moving the rows to {@code toState} instead of the done state. */
    public BatchConfirm finishAll(Connection connection, String toState, Map<?, ? extends Map<String, ?>> alsoSetById, long token) {
        Objects.requireNonNull(alsoSetById, "alsoSetById");
        return finishEach(connection, toState, Map.of(token, alsoSetById), 0).get(token);
    }

    /**
     * {@link #confirmAll} for the rows of several holders at once: each row confirmed under its own
     * token, all of them in one JDBC batch and one round trip. A process that works for several
     * resources pays one batch (in auto-commit on PostgreSQL, one commit) for all of their
     * confirms. {@code alsoSetByIdByToken} maps each token to its ids and the columns to set with
     * each (the same columns for every row; one id may appear under several tokens, and
     * {@link #MAX_BATCH} counts the rows of all of them). A refused row does not undo the others;
     * the answer is one {@link BatchConfirm} per token, in the order given. Refused rows cost one
     * more round trip per token, to read why.
     *
     * <p>{@code wait} bounds the batch, and each read that tells why rows were refused, as
     * {@link java.sql.Statement#setQueryTimeout} does (in whole seconds, at least one; the driver
     * may apply it to each statement of the batch): a batch that waits longer for a row another
     * transaction locked ends with a {@link DatabaseWaitException}, and nothing is reported. In
     * auto-commit, rows of a batch that ended so may have been written before it ended: a row that
     * now holds the done state under its own token was confirmed.
     */
    public Map<Long, BatchConfirm> confirmEach(Connection connection, Map<Long, ? extends Map<?, ? extends Map<String, ?>>> alsoSetByIdByToken,
                                               Duration wait) {
        Objects.requireNonNull(wait, "wait");
        if (wait.isNegative() || wait.isZero()) {
            throw new IllegalArgumentException("wait must be positive: " + wait);
        }
        long seconds = Math.max(1, (wait.toMillis() + 999) / 1000);
        return finishEach(connection, table.doneState(), alsoSetByIdByToken, (int) Math.min(Integer.MAX_VALUE, seconds));
    }

    /** One row of a batch under its own token. */
    private record BatchRow(Object id, long token, Map<String, ?> alsoSet) {
    }

    /** The rows of every token in one JDBC batch; {@code waitSeconds} 0: no bound of its own. */
    private Map<Long, BatchConfirm> finishEach(Connection connection, String toState,
                                               Map<Long, ? extends Map<?, ? extends Map<String, ?>>> alsoSetByIdByToken, int waitSeconds) {
        Objects.requireNonNull(connection, "connection");
        Objects.requireNonNull(alsoSetByIdByToken, "alsoSetByIdByToken");
        List<BatchRow> rows = new ArrayList<>();
        alsoSetByIdByToken.forEach((token, alsoSetById) -> {
            Objects.requireNonNull(token, "token");
            Objects.requireNonNull(alsoSetById, "alsoSetById");
            alsoSetById.forEach((id, alsoSet) -> rows.add(new BatchRow(id, token, alsoSet)));
        });
        if (rows.size() > MAX_BATCH) {
            throw new IllegalArgumentException("batch of " + rows.size() + " ids is over the limit of " + MAX_BATCH);
        }
        Map<Long, BatchConfirm> answers = new LinkedHashMap<>();
        if (rows.isEmpty()) {
            alsoSetByIdByToken.keySet().forEach(token -> answers.put(token, new BatchConfirm(token, List.of(), Map.of())));
            return answers;
        }
        Set<String> columns = rows.get(0).alsoSet().keySet();
        for (BatchRow row : rows) {
            requireId(row.id());
            if (!row.alsoSet().keySet().equals(columns)) {
                throw new IllegalArgumentException("every row of a batch must set the same columns: " + row.id() + " sets "
                        + row.alsoSet().keySet() + ", the first row " + columns);
            }
        }
        FinishStatements.Finish finish = finishStatements.statement(toState, columns);
        // One order for every holder, so two batches over the same rows lock them in the same order.
        rows.sort(Comparator.comparing((BatchRow row) -> String.valueOf(row.id())).thenComparingLong(BatchRow::token));
        try {
            int[] counts;
            try (PreparedStatement statement = connection.prepareStatement(finish.sql())) {
                if (waitSeconds > 0) {
                    statement.setQueryTimeout(waitSeconds);
                }
                for (BatchRow row : rows) {
                    finishStatements.bind(statement, finish, toState, row.id(), row.token(), row.alsoSet());
                    statement.addBatch();
                }
                counts = statement.executeBatch();
            }
            Map<Long, List<Object>> confirmed = new LinkedHashMap<>();
            Map<Long, List<Object>> notWritten = new LinkedHashMap<>();
            Map<Long, List<Object>> uncounted = new LinkedHashMap<>();
            for (Long token : alsoSetByIdByToken.keySet()) {
                confirmed.put(token, new ArrayList<>());
                notWritten.put(token, new ArrayList<>());
                uncounted.put(token, new ArrayList<>());
            }
            for (int i = 0; i < rows.size(); i++) {
                BatchRow row = rows.get(i);
                (counts[i] > 0 ? confirmed : counts[i] == 0 ? notWritten : uncounted).get(row.token()).add(row.id());
            }
            // Every row's reason is read before any refusal is reported: a read that fails leaves nothing reported.
            for (Long token : alsoSetByIdByToken.keySet()) {
                List<Object> confirmedUnder = confirmed.get(token);
                Map<Object, FencedException> refused = new LinkedHashMap<>(refusals(connection, notWritten.get(token), token, waitSeconds));
                // The driver did not count these rows (a bulk protocol): a row that now holds the target
                // state under this token was written by this batch, or had already been finished by this
                // holder; its own either way.
                refusals(connection, uncounted.get(token), token, waitSeconds).forEach((id, refusal) -> {
                    if (refusal instanceof FenceViolation v && v.storedFence() != null && v.storedFence() == token
                            && toState.equals(v.storedState())) {
                        confirmedUnder.add(id);
                    } else {
                        refused.put(id, refusal);
                    }
                });
                answers.put(token, new BatchConfirm(token, confirmedUnder, refused));
            }
            answers.forEach((token, answer) -> report(operation(toState), token, answer.refusals()));
            return answers;
        } catch (SQLException e) {
            throw SqlErrors.translate(dialectOrNull(connection), "batch confirm of " + rows.size() + " rows in " + table.table(), e);
        }
    }

    /**
     * Claims many rows under one token in one statement. Never throws for refused rows: it says
     * which were claimed and which refused, and {@link BatchClaim#requireAll()} turns any
     * refusal into the abort the article asks for.
     */
    public BatchClaim claimAll(Connection connection, List<?> ids, long token) {
        Objects.requireNonNull(ids, "ids");
        List<Object> distinct = new ArrayList<>(new LinkedHashSet<>(ids));
        distinct.forEach(FencedRows::requireId);
        if (distinct.size() > MAX_BATCH) {
            throw new IllegalArgumentException("batch of " + distinct.size() + " ids is over the limit of " + MAX_BATCH);
        }
        if (distinct.isEmpty()) {
            return new BatchClaim(token, List.of(), Map.of());
        }
        checkSchemaOnce(connection);
        JdbcDialect dialect = dialect(connection);
        try {
            List<Object> claimed = dialect.claimAll(connection, table, distinct, token);
            // The database returns ids as stored; under a case-insensitive collation 'R_1 ' asked is 'r_1' claimed.
            Set<String> claimedKeys = claimed.stream().map(dialect::idKey).collect(Collectors.toSet());
            List<Object> refused = distinct.stream().filter(id -> !claimedKeys.contains(dialect.idKey(id))).toList();
            return new BatchClaim(token, claimed, report("claim", token, refusals(connection, refused, token)));
        } catch (SQLException e) {
            throw SqlErrors.translate(dialect, "batch claim of " + distinct.size() + " rows in " + table.table(), e);
        }
    }

    /**
     * {@link #claim(Connection, Object, long)} on a connection of its own, committed before it goes
     * back to the pool, whatever auto-commit the pool hands out; the connection goes back as it came.
     * Inside a Spring transaction use the connection Spring bound to the thread instead (fenced-spring's
     * {@code SpringFencedRows}): a second connection would wait on the row locks the first holds.
     */
    public void claim(DataSource dataSource, Object id, long token) {
        AutoCommitWork.run(dataSource, table.table(), connection -> {
            claim(connection, id, token);
            return null;
        });
    }

    /** {@link #confirm(Connection, Object, long, Map)} on a connection of its own, as {@link #claim(DataSource, Object, long)}. */
    public void confirm(DataSource dataSource, Object id, long token, Map<String, ?> alsoSet) {
        AutoCommitWork.run(dataSource, table.table(), connection -> {
            confirm(connection, id, token, alsoSet);
            return null;
        });
    }

    /** {@link #claimAll(Connection, List, long)} on a connection of its own, as {@link #claim(DataSource, Object, long)}. */
    public BatchClaim claimAll(DataSource dataSource, List<?> ids, long token) {
        return AutoCommitWork.run(dataSource, table.table(), connection -> claimAll(connection, ids, token));
    }

    private FencedException refusal(String operation, Connection connection, Object id, long token) throws SQLException {
        return report(operation, token, refusals(connection, List.of(id), token)).get(id);
    }

    private String operation(String toState) {
        return toState.equals(table.doneState()) ? "confirm" : "finish";
    }

    private Map<Object, FencedException> report(String operation, long token, Map<Object, FencedException> refusals) {
        return refusalReport.report(operation, token, refusals);
    }

    /** Why each of {@code ids} was refused; the dialect is only looked up when there is one. */
    private Map<Object, FencedException> refusals(Connection connection, List<Object> ids, long token) throws SQLException {
        return refusals(connection, ids, token, 0);
    }

    /** {@link #refusals(Connection, List, long)}, the read bounded by {@code waitSeconds} (0: no bound of its own). */
    private Map<Object, FencedException> refusals(Connection connection, List<Object> ids, long token, int waitSeconds) throws SQLException {
        return ids.isEmpty() ? Map.of() : readBack.refusals(connection, dialect(connection), ids, token, waitSeconds);
    }

    private JdbcDialect dialect(Connection connection) {
        if (fixedDialect != null) {
            return fixedDialect;
        }
        try {
            return JdbcDialect.detect(Objects.requireNonNull(connection, "connection"));
        } catch (SQLException e) {
            throw SqlErrors.translate(null, "reading the database product", e);
        }
    }

    /** The dialect for translating an error; detecting it must not hide the error itself. */
    private JdbcDialect dialectOrNull(Connection connection) {
        if (fixedDialect != null) {
            return fixedDialect;
        }
        try {
            return JdbcDialect.detect(connection);
        } catch (SQLException | RuntimeException e) {
            return null;
        }
    }

    /**
     * The table's shape, checked before the first claim: a nullable fence column or an id that is
     * not unique would otherwise show up as misleading refusals or double claims.
     *
     * @throws SchemaProblemException with every problem found
     */
    private void checkSchemaOnce(Connection connection) {
        if (schemaChecked) {
            return;
        }
        try {
            SchemaCheck.require(connection, table);
        } catch (SQLException e) {
            throw SqlErrors.translate(dialectOrNull(connection), "checking the schema of " + table.table(), e);
        }
        schemaChecked = true;
    }

    private static void requireId(Object id) {
        if (id == null) {
            throw new IllegalArgumentException("row id must not be null");
        }
    }
}
