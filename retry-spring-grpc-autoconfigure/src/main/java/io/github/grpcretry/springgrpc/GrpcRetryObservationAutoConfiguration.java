package io.github.grpcretry.springgrpc;

import io.github.grpcretry.spring.GrpcRetryObservationConfiguration;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Import;

/**
 * Per-attempt observations (docs/observability.md): when an {@code ObservationRegistry} bean exists
 * (Spring Boot's observation auto-configuration) and {@code grpc.retry.observation.enabled} is not false,
 * the engine of every channel observes each attempt as a child of the call's observation (Spring Boot's
 * {@code ObservationGrpcClientInterceptor} runs outside the engine's global interceptor, see
 * {@code GrpcRetryAutoConfiguration}). An {@code AttemptObservationConvention} bean renames it or changes
 * its key values. With {@code spring.grpc.client.observation.enabled=false} (Spring Boot's switch for the
 * calls' observations) there are no attempt observations either: they would have no call to be children of.
 */
@AutoConfiguration(afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnBooleanProperty(name = "spring.grpc.client.observation.enabled", matchIfMissing = true)
@Import(GrpcRetryObservationConfiguration.class)
public class GrpcRetryObservationAutoConfiguration {
}
