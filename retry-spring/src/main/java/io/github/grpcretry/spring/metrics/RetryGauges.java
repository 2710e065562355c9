package io.github.grpcretry.spring.metrics;

import io.github.grpcretry.attempt.AdaptiveHedgingRegistry;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.metrics.RetryMeterNames;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The gauges the auto-configuration modules bind (Micrometer is needed on the class path): the limiter
 * gauges of every channel ({@value RetryMeterNames#TOKENS}, {@value RetryMeterNames#TOKENS_MAX},
 * {@value RetryMeterNames#BUDGET_BALANCE}) and the {@value RetryMeterNames#CHANNEL_STATE} gauges of each
 * channel (one gauge per {@link ConnectivityState}, 1 for the current state, 0 for the others).
 */
public final class RetryGauges {

    private RetryGauges() {
    }

    /**
     * A binder of the throttle and budget gauges of every channel of {@code limiters}: a limiter's
     * gauges are bound the moment it is created (limiters are made lazily, when a channel is built), and
     * those of existing limiters at once. Nothing is added to the call path.
     */
    public static MeterBinder limiters(RetryLimiterRegistry limiters) {
        return new RetryLimiterGauges(limiters);
    }

    /**
     * A binder of the {@value RetryMeterNames#HEDGING_DELAY} gauges (client, method; seconds): one per hedged
     * method of a channel with adaptive hedging, bound the moment the method's state is made (its first call)
     * and at once for those that exist. The gauge reads the current delay; nothing is added to the call path.
     */
    public static MeterBinder hedgingDelays(AdaptiveHedgingRegistry adaptiveHedging) {
        return registry -> adaptiveHedging.addListener(d -> Gauge.builder(RetryMeterNames.HEDGING_DELAY, d,
                        m -> m.delay().toNanos() / 1e9)
                .description("The current adaptive hedging delay of the method")
                .baseUnit("seconds")
                .tag(RetryMeterNames.TAG_CLIENT, d.channel())
                .tag(RetryMeterNames.TAG_METHOD, d.fullMethodName())
                .strongReference(true)
                .register(registry));
    }

    /**
     * The {@value RetryMeterNames#CHANNEL_STATE} gauges of an application's channels, one set per channel
     * name; closing it removes them all.
     */
    public static ChannelStates channelStates(MeterRegistry registry) {
        return new ChannelStateMeters(registry);
    }

    /** The channel-state gauges of every channel of an application, by channel name. */
    public interface ChannelStates extends AutoCloseable {

        /**
         * Gauges that follow {@code channel} ({@code getState(false)} and {@code notifyWhenStateChanged},
         * never asking it to connect); a later channel of the same name (Spring gRPC builds one on every
         * {@code createChannel}) takes the name's gauges over instead of registering a second set.
         */
        void watch(String name, ManagedChannel channel);

        /**
         * Gauges that read {@code state} on every scrape (for channels only reachable through such a view,
         * as net.devh's {@code GrpcChannelFactory.getConnectivityState()}), once per name; an unknown
         * (absent) state reports 0 everywhere.
         */
        void poll(String name, Supplier<@Nullable ConnectivityState> state);

        /** The channels that have gauges. */
        java.util.Set<String> channels();

        @Override
        void close();
    }
}
