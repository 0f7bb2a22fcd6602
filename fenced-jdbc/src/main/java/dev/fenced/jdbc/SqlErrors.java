package dev.fenced.jdbc;

import dev.fenced.FencedException;
import dev.fenced.StoreUnavailableException;
import dev.fenced.internal.Redaction;
import java.sql.SQLException;
import java.util.Optional;

/** Turns SQLExceptions into fenced's exceptions, keeping the retryable ones apart. */
final class SqlErrors {
    private SqlErrors() {
    }

    static FencedException translate(JdbcDialect dialect, String what, SQLException e) {
        String message = Redaction.redactUri(e.getMessage());
        // Before the conflicts: a lock wait that ran out is not a serialization failure, whatever its SQLSTATE.
        Optional<DatabaseWaitException.Kind> wait = DatabaseWaitException.kindOf(dialect, e);
        if (wait.isPresent()) {
            return new DatabaseWaitException(what + " gave up waiting for " + wait.get().waitedFor() + ": " + message, wait.get(), e);
        }
        if (dialect != null && dialect.isSerializationFailure(e)) {
            return new SerializationConflictException(what + " was aborted by a concurrent transaction: " + message,
                    e.getSQLState(), e.getErrorCode(), e);
        }
        String state = e.getSQLState();
        if (state != null && (state.startsWith("08") || state.startsWith("57P") || state.equals("28P01") || state.equals("28000"))) {
            return new StoreUnavailableException(what + " failed: the database is unreachable or refused the connection: " + message, e);
        }
        return new FencedDataAccessException(what + " failed: " + message, e);
    }
}
