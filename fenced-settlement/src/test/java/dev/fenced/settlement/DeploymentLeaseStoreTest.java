package dev.fenced.settlement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenced.testing.servers.OwnDatabase;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.UrlDataSource;
import dev.fenced.InMemoryLeaseStore;
import dev.fenced.LeaseStore;
import java.math.BigDecimal;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The deployment's lease store on PostgreSQL and MariaDB, each on a database of its own: the first
 * process records its store, another is refused until a switch, and a database that already holds
 * fenced rows (from Redis, the only store before the record) is taken as Redis's.
 */
class DeploymentLeaseStoreTest {

    @Test
    void onPostgresql() {
        try (OwnDatabase own = OwnDatabase.on(TestDatabases.postgresUrl())) {
            firstRecordsOthersAreRefusedUntilASwitch(own.url());
        }
        try (OwnDatabase own = OwnDatabase.on(TestDatabases.postgresUrl())) {
            fencedRowsFromBeforeTheRecordAreRedis(own.url());
        }
    }

    @Test
    void onMariadb() {
        TestDatabases.mariadb(); // skips without a MariaDB outside CI
        try (OwnDatabase own = OwnDatabase.on(TestDatabases.mariadbUrl().orElseThrow())) {
            firstRecordsOthersAreRefusedUntilASwitch(own.url());
        }
        try (OwnDatabase own = OwnDatabase.on(TestDatabases.mariadbUrl().orElseThrow())) {
            fencedRowsFromBeforeTheRecordAreRedis(own.url());
        }
    }

    private static void firstRecordsOthersAreRefusedUntilASwitch(String url) {
        DataSource db = new UrlDataSource(url);
        RefundSchema.migrate(db);
        assertThat(DeploymentLeaseStore.recorded(db)).isEmpty();
        DeploymentLeaseStore.requireSame(db, "database");
        DeploymentLeaseStore.requireSame(db, "database");
        assertThat(DeploymentLeaseStore.recorded(db)).contains("database");
        assertThatThrownBy(() -> DeploymentLeaseStore.requireSame(db, "redis"))
                .isInstanceOfSatisfying(LeaseStoreMismatchException.class, e -> {
                    assertThat(e.recorded()).isEqualTo("database");
                    assertThat(e.requested()).isEqualTo("redis");
                });
        LeaseStore checked = DeploymentLeaseStore.checking(new InMemoryLeaseStore(), db, "database");
        assertThat(checked.tryAcquire("settle:m_1", Duration.ofSeconds(5))).as("the deployment's store").isPresent();

        DeploymentLeaseStore.beginSwitch(db, "redis");
        assertThatThrownBy(() -> checked.tryAcquire("settle:m_2", Duration.ofSeconds(5)))
                .as("a worker already running on the old store takes no lease once a switch begins")
                .isInstanceOf(LeaseStoreMismatchException.class).hasMessageContaining("switch of this deployment's leases to redis");
        assertThatThrownBy(() -> DeploymentLeaseStore.requireSame(db, "redis")).as("nor one of the new store, before the switch ends")
                .isInstanceOf(LeaseStoreMismatchException.class);
        DeploymentLeaseStore.switchTo(db, "redis");
        DeploymentLeaseStore.requireSame(db, "redis");
        assertThatThrownBy(() -> DeploymentLeaseStore.requireSame(db, "database")).isInstanceOf(LeaseStoreMismatchException.class);
        assertThatThrownBy(() -> checked.tryAcquire("settle:m_3", Duration.ofSeconds(5))).isInstanceOf(LeaseStoreMismatchException.class);
        assertThatThrownBy(() -> DeploymentLeaseStore.requireSame(db, "Redis; DROP TABLE refund"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private static void fencedRowsFromBeforeTheRecordAreRedis(String url) {
        DataSource db = new UrlDataSource(url);
        // The schema before V7: refunds fenced by Redis's tokens, no store recorded.
        dev.fenced.jdbc.FencedSchema.migrate(db);
        org.flywaydb.core.Flyway.configure().dataSource(db).table(RefundSchema.HISTORY_TABLE).target("6")
                .baselineOnMigrate(true).baselineVersion("0")
                .locations("classpath:" + RefundSchema.SCRIPTS + "/" + (url.startsWith("jdbc:postgresql:") ? "postgresql" : "mariadb"))
                .load().migrate();
        RefundSeeder.seed(db, "m_before", 2, new BigDecimal("2.00"), "EUR");
        try (var c = db.getConnection(); var s = c.createStatement()) {
            s.executeUpdate("UPDATE refund SET fence = 7 WHERE merchant = 'm_before'");
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
        RefundSchema.migrate(db);
        assertThat(DeploymentLeaseStore.recorded(db)).contains("redis");
        assertThatThrownBy(() -> DeploymentLeaseStore.requireSame(db, "etcd")).isInstanceOf(LeaseStoreMismatchException.class);
    }
}
