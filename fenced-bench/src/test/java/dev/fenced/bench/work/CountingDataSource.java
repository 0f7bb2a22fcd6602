package dev.fenced.bench.work;

import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * A real {@link DataSource} seen through a counter: every statement execution, batch and
 * commit/rollback the code under test sends to the database is one round trip counted; every
 * statement it prepares is counted apart. Nothing is changed or answered in the database's place.
 */
final class CountingDataSource implements DataSource {
    private static final Set<String> EXECUTIONS = Set.of("execute", "executeQuery", "executeUpdate", "executeLargeUpdate",
            "executeBatch", "executeLargeBatch");

    private final DataSource real;
    final AtomicLong roundTrips = new AtomicLong();
    final AtomicLong prepared = new AtomicLong();

    CountingDataSource(DataSource real) {
        this.real = real;
    }

    @Override
    public Connection getConnection() throws SQLException {
        return counted(real.getConnection());
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return counted(real.getConnection(username, password));
    }

    private Connection counted(Connection connection) {
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                handler(connection, (method, result) -> {
                    String name = method.getName();
                    if (name.equals("commit") || name.equals("rollback")) {
                        roundTrips.incrementAndGet();
                    }
                    if (result instanceof CallableStatement callable) {
                        prepared.incrementAndGet();
                        return proxy(callable, CallableStatement.class);
                    }
                    if (result instanceof PreparedStatement statement) {
                        prepared.incrementAndGet();
                        return proxy(statement, PreparedStatement.class);
                    }
                    if (result instanceof Statement statement) {
                        return proxy(statement, Statement.class);
                    }
                    return result;
                }));
    }

    private Object proxy(Statement statement, Class<?> type) {
        return Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, handler(statement, (method, result) -> {
            if (EXECUTIONS.contains(method.getName())) {
                roundTrips.incrementAndGet();
            }
            return result;
        }));
    }

    /** Calls the real object, then lets {@code after} count and wrap what came back. */
    private static InvocationHandler handler(Object target, After after) {
        return (proxy, method, args) -> {
            Object result;
            try {
                result = method.invoke(target, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            return after.apply(method, result);
        };
    }

    private interface After {
        Object apply(Method method, Object result);
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return real.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        real.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        real.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return real.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() {
        return Logger.getGlobal();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return real.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return real.isWrapperFor(iface);
    }
}
