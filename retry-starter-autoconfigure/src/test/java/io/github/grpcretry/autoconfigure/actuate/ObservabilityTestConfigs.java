package io.github.grpcretry.autoconfigure.actuate;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/** The effective configuration the observability tests use for channel {@code inventory}. */
final class ObservabilityTestConfigs {

    static final RetryThrottlingPolicy THROTTLING = new RetryThrottlingPolicy(10, 0.1);

    private ObservabilityTestConfigs() {
    }

    /** SimpleService with a retry policy (3 attempts on UNAVAILABLE), throttling 10 / 0.1, a 10 % budget. */
    static ChannelRetryConfig inventory() {
        RetryPolicy retry = new RetryPolicy(3, Duration.ofMillis(50), Duration.ofMillis(200), 2.0,
                Set.of(Status.Code.UNAVAILABLE), null);
        MethodConfig simple = new MethodConfig(List.of(MethodName.of("grpc.testing.SimpleService", null)),
                null, Duration.ofSeconds(5), null, null, retry, null);
        MethodConfig fallback = new MethodConfig(List.of(MethodName.DEFAULT), true, null, null, 4096L, null, null);
        ServiceConfig sc = new ServiceConfig(List.of(simple, fallback), THROTTLING);
        return ChannelRetryConfig.of("inventory", sc).withBudget(new RetryBudgetPolicy(0.1, 10, Duration.ofSeconds(10)));
    }
}
