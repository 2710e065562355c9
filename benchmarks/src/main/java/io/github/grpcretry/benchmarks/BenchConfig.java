package io.github.grpcretry.benchmarks;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.RetryConfig;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleRequest;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The one retry policy every variant of every benchmark uses, so the engines are compared on the
 * same work: 4 attempts, 1 ms initial backoff, ×2, 8 ms max, UNAVAILABLE; an A6 throttle of 10
 * tokens with ratio 1 (a success gives back what a failure takes, so 20 % failures never throttle)
 * and, for the interceptor engine, a budget of 50 % of calls plus 10 retries/s over 10 s.
 */
final class BenchConfig {

    static final String SERVICE = "grpc.testing.SimpleService";
    static final int MAX_ATTEMPTS = 4;
    static final Duration INITIAL_BACKOFF = Duration.ofMillis(1);
    static final Duration MAX_BACKOFF = Duration.ofMillis(8);
    static final double MULTIPLIER = 2;

    /** 64 ASCII characters: a small, realistic unary payload. */
    static final SimpleRequest REQUEST = SimpleRequest.newBuilder()
            .setRequestMessage("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
            .build();

    private BenchConfig() {
    }

    static RetryPolicy policy() {
        return new RetryPolicy(MAX_ATTEMPTS, INITIAL_BACKOFF, MAX_BACKOFF, MULTIPLIER, Set.of(Status.Code.UNAVAILABLE),
                null);
    }

    static ServiceConfig serviceConfig() {
        MethodConfig mc = new MethodConfig(List.of(MethodName.of(SERVICE, null)), null, null, null, null, policy(),
                null);
        return new ServiceConfig(List.of(mc), new RetryThrottlingPolicy(10, 1));
    }

    static RetryBudgetPolicy budget() {
        return new RetryBudgetPolicy(0.5, 10, Duration.ofSeconds(10));
    }

    /** The channel as the starter would resolve it: defaults for cap and buffers, throttle and budget on. */
    static ChannelRetryConfig channel() {
        int cap = ChannelRetryConfig.DEFAULT_MAX_ATTEMPTS_CAP;
        return ChannelRetryConfig.of("bench", serviceConfig().capped(cap)).withMaxAttemptsCap(cap).withBudget(budget());
    }

    /**
     * The do-it-yourself equivalent in resilience4j: same attempts, UNAVAILABLE only, and A6's
     * exponential backoff {@code min(initial × multiplier^(n-1), max) × U(0.8, 1.2)} (as grpc-java
     * ≥ 1.80 and the interceptor engine do). resilience4j sleeps in whole milliseconds, so the delay
     * is rounded to ms (1 ms before the first retry).
     */
    static RetryConfig resilience4jConfig() {
        long initial = INITIAL_BACKOFF.toMillis();
        long max = MAX_BACKOFF.toMillis();
        IntervalFunction jittered = attempt -> {
            double backoff = Math.min(max, initial * Math.pow(MULTIPLIER, attempt - 1));
            return Math.round(backoff * ThreadLocalRandom.current().nextDouble(0.8, 1.2));
        };
        return RetryConfig.custom()
                .maxAttempts(MAX_ATTEMPTS)
                .intervalFunction(jittered)
                .retryOnException(e -> e instanceof StatusRuntimeException sre
                        && sre.getStatus().getCode() == Status.Code.UNAVAILABLE)
                .build();
    }
}
