package io.github.grpcretry.spring.metrics;

import io.github.grpcretry.metrics.RetryMeterNames;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The {@value RetryMeterNames#CHANNEL_STATE} gauges of one channel: one gauge per
 * {@link ConnectivityState} (tag {@code state} = the state's name, e.g. {@code READY},
 * {@code TRANSIENT_FAILURE}), 1 for the channel's current state and 0 for the others.
 *
 * <p>{@link #watch} follows a {@link ManagedChannel} with {@code getState(false)} and
 * {@code notifyWhenStateChanged} (never asking it to connect) until it shuts down; {@link #poll}
 * reads a supplier when the gauges are scraped (for channels only reachable through such a view, as
 * net.devh's {@code GrpcChannelFactory.getConnectivityState()}). {@link #close()} removes the
 * gauges and stops watching. Made by {@link RetryGauges}.
 */
final class ChannelStateMeter implements AutoCloseable {

    private static final ConnectivityState[] STATES = ConnectivityState.values();

    private final String channel;
    private final Supplier<ConnectivityState> state;
    private final MeterRegistry registry;
    private final List<Meter> gauges = new ArrayList<>(STATES.length);
    private volatile boolean closed;

    private ChannelStateMeter(MeterRegistry registry, String channel, Supplier<ConnectivityState> state) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.channel = Objects.requireNonNull(channel, "channel");
        this.state = state;
    }

    /** Gauges that follow {@code managedChannel}'s state changes. */
    static ChannelStateMeter watch(MeterRegistry registry, String channel, ManagedChannel managedChannel) {
        Watcher watcher = new Watcher(managedChannel);
        ChannelStateMeter meter = new ChannelStateMeter(registry, channel, watcher.current::get);
        watcher.owner = meter;
        meter.register();
        watcher.start();
        return meter;
    }

    /** Gauges that read {@code state} on every scrape; an unknown (absent) state reports 0 everywhere. */
    static ChannelStateMeter poll(MeterRegistry registry, String channel, Supplier<@Nullable ConnectivityState> state) {
        ChannelStateMeter meter = new ChannelStateMeter(registry, channel, Objects.requireNonNull(state, "state"));
        meter.register();
        return meter;
    }

    private void register() {
        for (ConnectivityState s : STATES) {
            gauges.add(Gauge.builder(RetryMeterNames.CHANNEL_STATE, this, m -> m.state() == s ? 1 : 0)
                    .description("1 for the channel's current connectivity state, 0 for the others")
                    .tag(RetryMeterNames.TAG_CLIENT, channel)
                    .tag(RetryMeterNames.TAG_STATE, s.name())
                    .strongReference(true)
                    .register(registry));
        }
    }

    String channel() {
        return channel;
    }

    /** The state the gauges report now; absent when unknown. */
    @Nullable ConnectivityState state() {
        if (closed) {
            return null;
        }
        try {
            return state.get();
        } catch (RuntimeException e) {
            return null;
        }
    }

    @Override
    public void close() {
        closed = true;
        for (Meter m : gauges) {
            registry.remove(m);
        }
    }

    /** Follows one ManagedChannel: re-arms notifyWhenStateChanged after every change until SHUTDOWN. */
    private static final class Watcher {
        private final ManagedChannel managedChannel;
        private final AtomicReference<ConnectivityState> current = new AtomicReference<>();
        private volatile @Nullable ChannelStateMeter owner;

        Watcher(ManagedChannel managedChannel) {
            this.managedChannel = Objects.requireNonNull(managedChannel, "managedChannel");
        }

        void start() {
            ConnectivityState s;
            try {
                s = managedChannel.getState(false);
            } catch (UnsupportedOperationException e) {
                return; // this channel does not report its state: all gauges stay 0
            }
            current.set(s);
            arm(s);
        }

        private void arm(ConnectivityState seen) {
            ChannelStateMeter o = owner; // set by watch() before start()
            if (seen == ConnectivityState.SHUTDOWN || o == null || o.closed) {
                return;
            }
            managedChannel.notifyWhenStateChanged(seen, this::changed);
        }

        private void changed() {
            ConnectivityState s = managedChannel.getState(false);
            current.set(s);
            arm(s);
        }
    }
}
