package io.github.grpcretry.attempt;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.grpc.MethodDescriptor;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Supplies a channel's {@linkplain RetryingClientInterceptor.Builder#fallbackRetryDecider fallback
 * decider}: the {@link RetryDecider} of each method that has no retry or hedging policy of its own. The
 * auto-configuration asks every bean of this type, in order, when it builds a channel's interceptor
 * engine and takes the first non-null answer (the resilience4j bridge is one).
 */
@FunctionalInterface
public interface RetryDeciderSource {

    /**
     * The fallback for the channel described by {@code config}; absent when this source has none for
     * it. The function may answer no decider for a method (it is then passed through).
     */
    @Nullable Function<MethodDescriptor<?, ?>, @Nullable RetryDecider> fallbackFor(ChannelRetryConfig config);
}
