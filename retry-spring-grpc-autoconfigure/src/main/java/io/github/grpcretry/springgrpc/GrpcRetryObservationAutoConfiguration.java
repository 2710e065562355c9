package io.github.grpcretry.springgrpc;

import io.github.grpcretry.attempt.AttemptObserver;
import io.github.grpcretry.observation.AttemptObservationConvention;
import io.github.grpcretry.observation.ObservationAttemptObserver;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Per-attempt observations (docs/observability.md): when an {@link ObservationRegistry} bean exists
 * (Spring Boot's observation auto-configuration) and {@code grpc.retry.observation.enabled} is not false,
 * the engine of every channel observes each attempt as a child of the call's observation (Spring Boot's
 * {@code ObservationGrpcClientInterceptor} runs outside the engine's global interceptor, see
 * {@link GrpcRetryAutoConfiguration}). An {@link AttemptObservationConvention} bean renames it or changes
 * its key values.
 */
@AutoConfiguration(afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass({ObservationRegistry.class, ObservationAttemptObserver.class})
@ConditionalOnBean(ObservationRegistry.class)
@ConditionalOnBooleanProperty(name = "grpc.retry.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "grpc.retry.observation.enabled", matchIfMissing = true)
public class GrpcRetryObservationAutoConfiguration {

    /** The engine's attempt observer (the interceptor engine of every channel takes it). */
    @Bean
    @ConditionalOnMissingBean(AttemptObserver.class)
    public ObservationAttemptObserver grpcRetryAttemptObserver(ObservationRegistry registry,
            ObjectProvider<AttemptObservationConvention> convention) {
        return new ObservationAttemptObserver(registry, convention.getIfAvailable());
    }
}
