package io.github.grpcretry.springgrpc;

import io.github.grpcretry.spring.GrpcRetryObservationConfiguration;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.context.annotation.Import;

/**
 * Per-attempt observations (docs/observability.md): when an {@code ObservationRegistry} bean exists
 * (Spring Boot's observation auto-configuration) and {@code grpc.retry.observation.enabled} is not false,
 * the engine of every channel observes each attempt as a child of the call's observation (Spring Boot's
 * {@code ObservationGrpcClientInterceptor} runs outside the engine's global interceptor, see
 * {@code GrpcRetryAutoConfiguration}). An {@code AttemptObservationConvention} bean renames it or changes
 * its key values.
 */
@AutoConfiguration(afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@Import(GrpcRetryObservationConfiguration.class)
public class GrpcRetryObservationAutoConfiguration {
}
