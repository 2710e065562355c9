package io.github.grpcretry.integration;

import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.metrics.RetryMeterNames;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
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
