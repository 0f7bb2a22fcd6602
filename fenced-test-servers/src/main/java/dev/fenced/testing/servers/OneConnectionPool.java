package dev.fenced.testing.servers;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import javax.sql.DataSource;

/**
 * A pool of one real connection that hands it out as it is and ignores close, like a pool that
 * does not reset what a borrower changed: what the code under test leaves on the connection stays
 * there for the test to see.
 */
public final class OneConnectionPool {
    private OneConnectionPool() {
    }

    public static DataSource of(Connection connection) {
        Connection handedOut = (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("close")) {
                        return null;
                    }
                    try {
                        return method.invoke(connection, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("getConnection")) {
                        return handedOut;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }
}
