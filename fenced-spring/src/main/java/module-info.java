/** The fenced guard inside Spring-managed transactions; Spring itself is the application's (provided). */
module dev.fenced.spring {
    requires transitive dev.fenced.jdbc;
    requires spring.jdbc;
    requires spring.tx;

    exports dev.fenced.spring;
}
