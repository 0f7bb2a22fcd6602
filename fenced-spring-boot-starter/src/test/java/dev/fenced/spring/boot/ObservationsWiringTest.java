package dev.fenced.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenced.FencedExecutor;
import dev.fenced.micrometer.FencedObservations;
import dev.fenced.testing.servers.TestDatabases;
import dev.fenced.testing.servers.TestRedis;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The starter puts fenced's observations in the application's ObservationRegistry, beside its meters, or not at all when told. */
class ObservationsWiringTest {
    private final List<String> stopped = new CopyOnWriteArrayList<>();
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, FencedAutoConfiguration.class))
            .withPropertyValues("spring.datasource.url=" + TestDatabases.postgresUrl(), "fenced.redis.url=" + TestRedis.uri())
            .withBean(ObservationRegistry.class, () -> {
                ObservationRegistry registry = ObservationRegistry.create();
                registry.observationConfig().observationHandler(new ObservationHandler<>() {
                    @Override
                    public void onStop(Observation.Context context) {
                        stopped.add(context.getName());
                    }

                    @Override
                    public boolean supportsContext(Observation.Context context) {
                        return true;
                    }
                });
                return registry;
            });

    @Test
    void anExecutorRunIsObservedInTheApplicationsRegistry() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean("fencedObservations")).isInstanceOf(FencedObservations.class);
            context.getBean(FencedExecutor.class).execute("obs:" + UUID.randomUUID(), lease -> lease.token()).orThrow();
            assertThat(stopped).containsExactly(FencedObservations.ACQUIRE, FencedObservations.RUN);
        });
    }

    @Test
    void switchedOffNothingIsObserved() {
        runner.withPropertyValues("fenced.observations.enabled=false").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean("fencedObservations");
            context.getBean(FencedExecutor.class).execute("obs:" + UUID.randomUUID(), lease -> lease.token()).orThrow();
            assertThat(stopped).isEmpty();
        });
    }
}
