/** The fenced guard inside Spring-managed transactions, and {@code @FencedLock}; Spring itself is the application's (provided). */
module dev.fenced.spring {
    requires transitive dev.fenced.jdbc;
    requires spring.jdbc;
    requires transitive spring.tx;
    requires spring.beans;
    requires spring.core;
    // @FencedLock's: an application that uses only the guard needs none of them.
    requires static transitive spring.aop;
    requires static spring.context;
    requires static spring.expression;

    exports dev.fenced.spring;
}
