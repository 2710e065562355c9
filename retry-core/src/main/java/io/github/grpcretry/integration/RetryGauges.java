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
 * {@value RetryMeterNames#BUDGET_BALANCE}) and the {@value RetryMeterNames#CHANNEL_STATE} gauges of one
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
     * Channel-state gauges that follow {@code managedChannel} ({@code getState(false)} and
     * {@code notifyWhenStateChanged}, never asking it to connect) until it shuts down.
     */
    public static ChannelState watchChannelState(MeterRegistry registry, String channel, ManagedChannel managedChannel) {
        return ChannelStateMeter.watch(registry, channel, managedChannel);
    }

    /**
     * Channel-state gauges that read {@code state} on every scrape (for channels only reachable through
     * such a view, as net.devh's {@code GrpcChannelFactory.getConnectivityState()}); an unknown (absent)
     * state reports 0 everywhere.
     */
    public static ChannelState pollChannelState(MeterRegistry registry, String channel,
            Supplier<@Nullable ConnectivityState> state) {
        return ChannelStateMeter.poll(registry, channel, state);
    }

    /** The channel-state gauges of one channel; {@link #close()} removes them and stops watching. */
    public interface ChannelState extends AutoCloseable {

        String channel();

        /** The state the gauges report now; absent when unknown. */
        @Nullable ConnectivityState state();

        @Override
        void close();
    }
}
