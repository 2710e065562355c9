package io.github.grpcretry.spring;

import io.github.grpcretry.attempt.AttemptObserver;
import io.github.grpcretry.observation.AttemptObservationConvention;
import io.github.grpcretry.observation.ObservationAttemptObserver;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Per-attempt observations (docs/observability.md), the same on both lines (each line's
 * auto-configuration imports it, ordered after its Boot line's observation auto-configuration): when an
 * {@link ObservationRegistry} bean exists and {@code grpc.retry.observation.enabled} is not false, the
 * interceptor engine of every channel observes each attempt as a child of the call's observation. An
 * {@link AttemptObservationConvention} bean renames it or changes its key values.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ObservationRegistry.class, ObservationAttemptObserver.class})
@ConditionalOnBean(ObservationRegistry.class)
@ConditionalOnGrpcRetryEnabled
@ConditionalOnBooleanProperty(name = "grpc.retry.observation.enabled", matchIfMissing = true)
public class GrpcRetryObservationConfiguration {

    /** The engine's attempt observer (the interceptor engine of every channel takes it). */
    @Bean
    @ConditionalOnMissingBean(AttemptObserver.class)
    public ObservationAttemptObserver grpcRetryAttemptObserver(ObservationRegistry registry,
            ObjectProvider<AttemptObservationConvention> convention) {
        return new ObservationAttemptObserver(registry, convention.getIfAvailable());
    }
}
