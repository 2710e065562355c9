package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.AttemptObserver;
import io.github.grpcretry.observation.ObservationAttemptObserver;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@link GrpcRetryAutoConfiguration} after Spring Boot's observation auto-configuration. */
class GrpcRetryObservationAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
            AutoConfigurations.of(ObservationAutoConfiguration.class, GrpcRetryAutoConfiguration.class));

    @Test
    void bootsObservationRegistryGetsTheAttemptObserver() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(ObservationRegistry.class);
            assertThat(context).hasSingleBean(ObservationAttemptObserver.class);
        });
    }

    @Test
    void disabledOrSwitchedOffRegistersNoObserver() {
        runner.withPropertyValues("grpc.retry.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(AttemptObserver.class));
        runner.withPropertyValues("grpc.retry.observation.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(AttemptObserver.class));
    }

    @Test
    void ownAttemptObserverBacksTheStartersOff() {
        AttemptObserver own = target -> null;
        runner.withBean("ownObserver", AttemptObserver.class, () -> own)
                .run(context -> assertThat(context).getBean(AttemptObserver.class).isSameAs(own));
    }

    @Test
    void withoutMicrometerObservationNoObserver() {
        runner.withClassLoader(new FilteredClassLoader("io.micrometer.observation")).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(AttemptObserver.class);
        });
    }
}
