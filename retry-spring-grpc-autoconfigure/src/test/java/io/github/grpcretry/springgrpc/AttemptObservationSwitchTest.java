package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.AttemptObserver;
import io.github.grpcretry.observation.ObservationAttemptObserver;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import org.junit.jupiter.api.Test;

/** Spring Boot's switch of the gRPC client observations also switches the engine's attempt observations. */
class AttemptObservationSwitchTest {

    @Test
    void attemptsAreObservedWhenSpringGrpcObservesCalls() {
        try (GrpcClientContext client = GrpcClientContext.start()) {
            assertThat(client.context().getBeansOfType(AttemptObserver.class).values())
                    .singleElement().isInstanceOf(ObservationAttemptObserver.class);
        }
    }

    @Test
    void springGrpcObservationOffTurnsAttemptObservationsOff() {
        try (GrpcClientContext client = GrpcClientContext.start("spring.grpc.client.observation.enabled=false")) {
            assertThat(client.context().getBeansOfType(AttemptObserver.class)).isEmpty();
        }
    }
}
