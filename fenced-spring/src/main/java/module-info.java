/** The fenced guard inside Spring-managed transactions, and {@code @FencedLock}; Spring itself is the application's (provided). */
module dev.fenced.spring {
    requires transitive dev.fenced.jdbc;
    requires spring.jdbc;
    requires transitive spring.tx;
    requires transitive spring.aop;
    requires spring.beans;
    requires spring.context;
    requires spring.core;
    requires spring.expression;

    exports dev.fenced.spring;
}
