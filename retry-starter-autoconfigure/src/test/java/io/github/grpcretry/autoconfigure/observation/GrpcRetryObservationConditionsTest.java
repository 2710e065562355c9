package io.github.grpcretry.autoconfigure.observation;

import io.github.grpcretry.autoconfigure.GrpcRetryAutoConfiguration;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.AttemptObserver;
import io.github.grpcretry.observation.ObservationAttemptObserver;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The conditions of {@link GrpcRetryAutoConfiguration}, alone in an ApplicationContextRunner. */
class GrpcRetryObservationConditionsTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(GrpcRetryAutoConfiguration.class))
            .withBean(ObservationRegistry.class, ObservationRegistry::create);

    @Test
    void aRegistryGetsTheObserverUnlessDisabled() {
        runner.run(context -> assertThat(context).hasSingleBean(ObservationAttemptObserver.class));
        runner.withPropertyValues("grpc.retry.enabled=false")
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
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(GrpcRetryAutoConfiguration.class))
                .withClassLoader(new FilteredClassLoader("io.micrometer.observation"))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(AttemptObserver.class));
    }
}
