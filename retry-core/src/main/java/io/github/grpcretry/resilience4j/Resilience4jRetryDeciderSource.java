package io.github.grpcretry.resilience4j;

import io.github.grpcretry.attempt.RetryDecider;
import io.github.grpcretry.attempt.RetryDeciderSource;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryRegistry;
import io.grpc.MethodDescriptor;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Channels whose {@code resilience4j-retry} names an instance of a resilience4j {@link RetryRegistry}
 * get that instance as the {@link RetryDecider} of every method without a retry or hedging policy of
 * its own. Instances are looked up with {@link RetryRegistry#find} (never created on demand), one
 * decider per instance.
 */
public final class Resilience4jRetryDeciderSource implements RetryDeciderSource {

    private final RetryRegistry registry;
    private final ConcurrentHashMap<Retry, Resilience4jRetryDecider> deciders = new ConcurrentHashMap<>();

    public Resilience4jRetryDeciderSource(RetryRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    /** The names of {@code registry}'s Retry instances (what a channel's {@code resilience4j-retry} may name). */
    public static java.util.List<String> instanceNames(RetryRegistry registry) {
        java.util.List<String> names = new java.util.ArrayList<>();
        for (Retry r : registry.getAllRetries()) {
            names.add(r.getName());
        }
        return names;
    }

    /**
     * @throws IllegalStateException when the channel names an instance the registry does not hold
     */
    @Override
    public @Nullable Function<MethodDescriptor<?, ?>, RetryDecider> fallbackFor(ChannelRetryConfig config) {
        String name = config.resilience4jRetry();
        if (name == null) {
            return null;
        }
        Retry retry = find(name).orElseThrow(() -> new IllegalStateException("channel " + config.channel()
                + ": no resilience4j Retry instance '" + name + "' in the RetryRegistry"));
        RetryDecider decider = deciders.computeIfAbsent(retry, Resilience4jRetryDecider::new);
        return method -> decider;
    }

    /**
     * A resilience4j {@link Retry} instance as a {@link RetryDecider}, for a channel built by hand
     * ({@code RetryingClientInterceptor.Builder.fallbackRetryDecider(method -> decider)}): its attempt
     * count, its interval function (backoff, jitter) and its retry predicates decide.
     */
    public static RetryDecider decider(Retry retry) {
        return new Resilience4jRetryDecider(retry);
    }

    /** The instance called {@code name}, if the registry holds it. */
    public Optional<Retry> find(String name) {
        return registry.find(name);
    }

    public RetryRegistry registry() {
        return registry;
    }
}
