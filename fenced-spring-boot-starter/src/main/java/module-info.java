/**
 * The Spring Boot auto-configuration of fenced's library beans. Micrometer, actuator and Spring
 * Data Redis are optional, as in the pom. Spring reads the configuration classes reflectively.
 */
module dev.fenced.spring.boot {
    requires transitive dev.fenced.redis;
    requires transitive dev.fenced.jdbc;
    requires transitive dev.fenced.spring;
    requires static dev.fenced.micrometer;
    requires static dev.fenced.shedlock;
    requires static micrometer.core;
    requires static micrometer.observation;
    requires org.slf4j;
    requires spring.aop;
    requires spring.beans;
    requires spring.boot;
    requires spring.boot.autoconfigure;
    requires spring.context;
    requires spring.core;
    requires spring.jdbc;
    requires static spring.boot.actuator;
    requires static spring.boot.actuator.autoconfigure;
    requires static spring.data.redis;
    requires static spring.boot.health;

    exports dev.fenced.spring.boot;
    opens dev.fenced.spring.boot to spring.core, spring.beans, spring.context;
}
