package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.grpc.Status;
import org.junit.jupiter.api.Test;

/**
 * Status codes are bound as {@code io.grpc.Status.Code}: names in any case as Spring Boot binds any
 * enum, numbers through the starter's converter, under any channel and any method entry. (A value naming
 * no code: {@code FailureOriginTest}.)
 */
class StatusCodeBindingTest {

    @Test
    void namesInAnyCaseAndNumbersBindUnderEveryChannelAndMethodEntry() {
        String m = "grpc.retry.clients.inventory.service-config.method[1].";
        String h = "grpc.retry.clients.GLOBAL.service-config.method[0].";
        try (GrpcClientContext client = GrpcClientContext.start(
                m + "name[0].service=shop.Inventory",
                m + "retry.max-attempts=3", m + "retry.initial-backoff=10ms", m + "retry.max-backoff=100ms",
                m + "retry.backoff-multiplier=2",
                m + "retry.retryable-status-codes[0]=deadline-exceeded", m + "retry.retryable-status-codes[1]=14",
                m + "retry.retryable-status-codes[2]=Resource_Exhausted",
                "grpc.retry.clients.inventory.service-config.method[0].name[0].service=shop.Other",
                "grpc.retry.clients.inventory.service-config.method[0].timeout=1s",
                h + "hedging.max-attempts=2", h + "hedging.non-fatal-status-codes=unavailable,8")) {
            ChannelRetryConfigs configs = client.bean(ChannelRetryConfigs.class);
            MethodConfig retry = configs.forChannel("inventory").serviceConfig().methodConfigs().stream()
                    .filter(c -> c.retryPolicy() != null).findFirst().orElseThrow();
            assertThat(retry.retryPolicy().retryableStatusCodes()).containsExactlyInAnyOrder(
                    Status.Code.DEADLINE_EXCEEDED, Status.Code.UNAVAILABLE, Status.Code.RESOURCE_EXHAUSTED);
            MethodConfig hedging = configs.forChannel("any-other").serviceConfig().methodConfigs().stream()
                    .filter(c -> c.hedgingPolicy() != null).findFirst().orElseThrow();
            assertThat(hedging.hedgingPolicy().nonFatalStatusCodes()).containsExactlyInAnyOrder(
                    Status.Code.UNAVAILABLE, Status.Code.RESOURCE_EXHAUSTED);
        }
    }
}
