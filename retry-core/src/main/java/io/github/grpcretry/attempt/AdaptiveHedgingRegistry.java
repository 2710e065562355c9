package io.github.grpcretry.attempt;

import io.github.grpcretry.policy.AdaptiveHedgingPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The adaptive hedging delays of an application's channels, per channel and hedged method (docs/design.md,
 * "Adaptive hedging delay"): give one registry to every {@link RetryingClientInterceptor} of the application
 * ({@link RetryingClientInterceptor.Builder#adaptiveHedging}), read the current delays for meters and the
 * endpoint.
 *
 * <p>State survives a configuration refresh: an engine built again for a channel whose
 * {@link AdaptiveHedgingPolicy} is equal to the one the registry holds for it takes over that channel's state
 * (each method's latency window, its delay and its hedge count); a channel whose adaptive settings changed
 * starts afresh. Thread-safe.
 */
public final class AdaptiveHedgingRegistry {

    /** The current adaptive hedging delay of one hedged method of a channel, as meters and the endpoint read it. */
    public interface MethodDelay {

        String channel();

        /** {@code package.Service/Method}. */
        String fullMethodName();

        /** The delay before the next hedge: the adapted one, or the configured {@code hedging.delay} until then. */
        Duration delay();

        /** Whether {@link #delay()} comes from observed latency (the window holds {@code min-samples} calls). */
        boolean adapted();

        /** Calls of the method in the window. */
        long windowCalls();

        /** Hedges of the method in the window. */
        long windowHedges();

        /** Call latencies in the window at the last refresh. */
        long windowSamples();
    }

    /** One channel's methods under one policy. */
    static final class ChannelDelays {
        final AdaptiveHedgingPolicy policy;
        private final String channel;
        private final AdaptiveHedgingRegistry registry;
        private final ConcurrentHashMap<String, AdaptiveDelay> methods = new ConcurrentHashMap<>();

        ChannelDelays(String channel, AdaptiveHedgingPolicy policy, AdaptiveHedgingRegistry registry) {
            this.channel = channel;
            this.policy = policy;
            this.registry = registry;
        }

        /** The state of {@code fullMethodName}, made on first use. */
        AdaptiveDelay method(String fullMethodName) {
            AdaptiveDelay d = methods.get(fullMethodName);
            if (d != null) {
                return d;
            }
            AdaptiveDelay made = new AdaptiveDelay(channel, fullMethodName, policy, registry.ticker);
            d = methods.putIfAbsent(fullMethodName, made);
            if (d != null) {
                return d;
            }
            registry.created(made);
            return made;
        }
    }

    private final LongSupplier ticker;
    private final ConcurrentHashMap<String, ChannelDelays> channels = new ConcurrentHashMap<>();
    private final List<Consumer<MethodDelay>> listeners = new CopyOnWriteArrayList<>();

    /** A registry on {@link System#nanoTime()}. */
    public AdaptiveHedgingRegistry() {
        this(System::nanoTime);
    }

    /** A registry on {@code ticker} (nanoseconds, as {@link System#nanoTime()}; tests give a controllable one). */
    public AdaptiveHedgingRegistry(LongSupplier ticker) {
        this.ticker = Objects.requireNonNull(ticker, "ticker");
    }

    /** {@code channel}'s state under {@code policy}: the one held when its policy is equal, else a new one. */
    ChannelDelays channel(String channel, AdaptiveHedgingPolicy policy) {
        return channels.compute(channel, (name, held) -> held != null && held.policy.equals(policy) ? held
                : new ChannelDelays(name, policy, this));
    }

    /**
     * Whether an engine built now for {@code channel} with {@code policy} would take over the state held for it
     * (the policy is equal to the held one): for a configuration refresh that wants to say so.
     */
    public boolean keeps(String channel, AdaptiveHedgingPolicy policy) {
        ChannelDelays held = channels.get(channel);
        return held != null && held.policy.equals(policy);
    }

    /** Forgets {@code channel}'s state (its adaptive hedging was turned off). */
    public void remove(String channel) {
        channels.remove(channel);
    }

    /** The current delays of every channel and method seen so far. */
    public List<MethodDelay> delays() {
        List<MethodDelay> out = new ArrayList<>();
        channels.values().forEach(c -> out.addAll(c.methods.values()));
        return out;
    }

    /** The current delays of {@code channel}'s methods. */
    public List<MethodDelay> delays(String channel) {
        ChannelDelays c = channels.get(channel);
        return c == null ? List.of() : List.copyOf(c.methods.values());
    }

    /**
     * Calls {@code listener} with every method's state as it is made (the first call of a hedged method of a
     * channel with adaptive hedging), and at once for those that exist: a meter binder registers its gauges here.
     * A listener must not throw.
     */
    public void addListener(Consumer<MethodDelay> listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
        delays().forEach(listener);
    }

    private void created(AdaptiveDelay d) {
        for (Consumer<MethodDelay> l : listeners) {
            l.accept(d);
        }
    }
}
