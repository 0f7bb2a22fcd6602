/**
 * Fenced writes and transactions on JDBC, the schema check, the database token sources and fence
 * floor. Flyway is optional: only the migrations need it. The migrations are resources of this
 * module, read on the class path (fenced's tests and command line run there); on the module path
 * their resource-only packages are not opened to Flyway yet (javac cannot open a package without a
 * class), so an application there runs the migrations from its own copy.
 */
module dev.fenced.jdbc {
    requires transitive dev.fenced.core;
    requires transitive java.sql;
    requires org.slf4j;
    requires static flyway.core;

    exports dev.fenced.jdbc;
}
