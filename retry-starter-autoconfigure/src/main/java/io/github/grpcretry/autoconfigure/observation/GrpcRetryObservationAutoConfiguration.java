package io.github.grpcretry.autoconfigure.observation;

import io.github.grpcretry.attempt.AttemptObserver;
import io.github.grpcretry.observation.AttemptObservationConvention;
import io.github.grpcretry.observation.ObservationAttemptObserver;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Per-attempt observations (docs/observability.md): when an {@link ObservationRegistry} bean exists
 * (Spring Boot's observation auto-configuration, with Actuator) and {@code grpc.retry.observation.enabled}
 * is not false, every channel's interceptor engine observes each attempt as a child of the call's
 * observation (the one net.devh's observation interceptor creates outside the engine). An
 * {@link AttemptObservationConvention} bean renames it or changes its key values.
 */
@AutoConfiguration(afterName = "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration")
@ConditionalOnClass({ObservationRegistry.class, ObservationAttemptObserver.class})
@ConditionalOnBean(ObservationRegistry.class)
@ConditionalOnProperty(prefix = "grpc.retry", name = "enabled", havingValue = "true", matchIfMissing = true)
@ConditionalOnProperty(prefix = "grpc.retry.observation", name = "enabled", havingValue = "true", matchIfMissing = true)
public class GrpcRetryObservationAutoConfiguration {

    /** The engine's attempt observer (the interceptor engine of every channel takes it). */
    @Bean
    @ConditionalOnMissingBean(AttemptObserver.class)
    public ObservationAttemptObserver grpcRetryAttemptObserver(ObservationRegistry registry,
            ObjectProvider<AttemptObservationConvention> convention) {
        return new ObservationAttemptObserver(registry, convention.getIfAvailable());
    }
}
