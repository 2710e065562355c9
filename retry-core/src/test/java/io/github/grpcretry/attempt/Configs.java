package io.github.grpcretry.attempt;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.HedgingPolicy;
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

/** Channel configurations for the tests: one retry policy for the whole SimpleService. */
final class Configs {

    static final String SERVICE = "grpc.testing.SimpleService";

    private Configs() {
    }

    static RetryPolicy policy(int maxAttempts, long initialMs, long maxMs, double multiplier, Status.Code... codes) {
        return new RetryPolicy(maxAttempts, Duration.ofMillis(initialMs), Duration.ofMillis(maxMs), multiplier,
                Set.of(codes), null);
    }

    static RetryPolicy withReceiveTimeout(RetryPolicy p, Duration timeout) {
        return new RetryPolicy(p.maxAttempts(), p.initialBackoff(), p.maxBackoff(), p.backoffMultiplier(),
                p.retryableStatusCodes(), timeout);
    }

    /** R1's policy: max-attempts 3, 50 ms, ×2, UNAVAILABLE. */
    static RetryPolicy r1(int maxAttempts) {
        return policy(maxAttempts, 50, 1000, 2, Status.Code.UNAVAILABLE);
    }

    /** A fast policy for scenario tables: 10 ms, ×2, UNAVAILABLE. */
    static RetryPolicy fast(int maxAttempts) {
        return policy(maxAttempts, 10, 100, 2, Status.Code.UNAVAILABLE);
    }

    static ServiceConfig service(RetryPolicy policy, RetryThrottlingPolicy throttling) {
        return new ServiceConfig(List.of(new MethodConfig(List.of(MethodName.of(SERVICE, null)), null, null, null, null,
                policy, null)), throttling);
    }

    static ServiceConfig hedged(HedgingPolicy hedging) {
        return hedged(hedging, null);
    }

    static ServiceConfig hedged(HedgingPolicy hedging, RetryThrottlingPolicy throttling) {
        return new ServiceConfig(List.of(new MethodConfig(List.of(MethodName.of(SERVICE, null)), null, null, null, null,
                null, hedging)), throttling);
    }

    /** A hedging policy: {@code maxAttempts}, {@code delayMs} between hedges, the given non-fatal codes. */
    static HedgingPolicy hedging(int maxAttempts, long delayMs, Status.Code... nonFatal) {
        return new HedgingPolicy(maxAttempts, Duration.ofMillis(delayMs), Set.of(nonFatal));
    }

    static ChannelRetryConfig channel(ServiceConfig sc) {
        return channel(sc, ChannelRetryConfig.DEFAULT_PER_RPC_BUFFER_LIMIT, ChannelRetryConfig.DEFAULT_RETRY_BUFFER_SIZE,
                null);
    }

    static ChannelRetryConfig channel(ServiceConfig sc, long perRpcLimit, long retryBufferSize,
            RetryBudgetPolicy budget) {
        int cap = ChannelRetryConfig.DEFAULT_MAX_ATTEMPTS_CAP;
        return ChannelRetryConfig.of("test", sc.capped(cap)).withMaxAttemptsCap(cap).withBuffers(perRpcLimit, retryBufferSize).withBudget(budget);
    }

    static ChannelRetryConfig channel(RetryPolicy policy) {
        return channel(service(policy, null));
    }
}
