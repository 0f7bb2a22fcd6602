/**
 * The reference settlement worker, reconciliation and the refund table. Needs Flyway, which
 * fenced-jdbc leaves optional: the refund table and the journal are migrated with it.
 */
module dev.fenced.settlement {
    requires transitive dev.fenced.core;
    requires transitive dev.fenced.jdbc;
    requires transitive dev.fenced.provider;
    requires static flyway.core; // present at run time through the pom; static: Flyway names no module of its own
    requires org.slf4j;
    requires static micrometer.core;

    exports dev.fenced.settlement;
    exports dev.fenced.settlement.metrics;
}
