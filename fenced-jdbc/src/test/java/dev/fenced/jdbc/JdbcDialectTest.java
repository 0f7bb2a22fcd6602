package dev.fenced.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Which database a driver's product name and version mean, as the drivers report them. */
class JdbcDialectTest {

    @Test
    void mariaDbIsKnownByNameOrByTheVersionMySqlsDriverReports() {
        assertThat(JdbcDialect.detect("PostgreSQL", "15.20 (Debian 15.20-0+deb12u1)")).isSameAs(PostgresDialect.INSTANCE);
        assertThat(JdbcDialect.detect("MariaDB", "10.11.19-MariaDB-0+deb12u1")).isSameAs(MariaDbDialect.INSTANCE);
        assertThat(JdbcDialect.detect("MySQL", "5.5.5-10.11.19-MariaDB-0+deb12u1")).as("MySQL Connector/J on a MariaDB server")
                .isSameAs(MariaDbDialect.INSTANCE);
    }

    @Test
    void mySqlAndH2AreRefusedWithTheReason() {
        assertThatThrownBy(() -> JdbcDialect.detect("MySQL", "8.0.36")).isInstanceOf(UnsupportedDatabaseException.class)
                .hasMessageContaining("'MySQL 8.0.36'").hasMessageContaining("no sequences");
        assertThatThrownBy(() -> JdbcDialect.detect("H2", "2.3.232 (2024-08-11)")).isInstanceOf(UnsupportedDatabaseException.class)
                .hasMessageContaining("supports PostgreSQL and MariaDB");
    }
}
