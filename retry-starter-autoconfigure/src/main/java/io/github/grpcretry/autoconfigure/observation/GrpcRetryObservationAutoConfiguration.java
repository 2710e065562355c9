package io.github.grpcretry.autoconfigure.observation;

import io.github.grpcretry.spring.GrpcRetryObservationConfiguration;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.context.annotation.Import;

/**
 * Per-attempt observations (docs/observability.md): when an {@code ObservationRegistry} bean exists
 * (Spring Boot's observation auto-configuration, with Actuator) and {@code grpc.retry.observation.enabled}
 * is not false, every channel's interceptor engine observes each attempt as a child of the call's
 * observation (the one net.devh's observation interceptor creates outside the engine). An
 * {@code AttemptObservationConvention} bean renames it or changes its key values.
 */
@AutoConfiguration(afterName = "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration")
@Import(GrpcRetryObservationConfiguration.class)
public class GrpcRetryObservationAutoConfiguration {
}
