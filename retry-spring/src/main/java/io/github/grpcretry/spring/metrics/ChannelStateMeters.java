package io.github.grpcretry.spring.metrics;

import io.github.grpcretry.spring.report.ChannelStateSource;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The {@code grpc.client.channel.state} gauges of every channel of an application, one
 * {@link ChannelStateMeter} per channel name: what both Spring Boot lines' auto-configurations keep
 * when Micrometer is there. A name's gauges are registered once; {@link #watch} of a later channel of the same name (Spring
 * gRPC builds a new channel on every {@code createChannel}) moves them to that channel, the one the
 * {@link ChannelStateSource} reports, instead of registering a second set that Micrometer would refuse.
 * {@link #close()} removes every gauge.
 */
final class ChannelStateMeters implements RetryGauges.ChannelStates {

    private final MeterRegistry registry;
    private final Map<String, ChannelStateMeter> meters = new ConcurrentHashMap<>();

    ChannelStateMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public synchronized void watch(String name, ManagedChannel channel) {
        ChannelStateMeter earlier = meters.remove(name);
        if (earlier != null) {
            earlier.close();
        }
        meters.put(name, ChannelStateMeter.watch(registry, name, channel));
    }

    @Override
    public synchronized void poll(String name, Supplier<@Nullable ConnectivityState> state) {
        meters.computeIfAbsent(name, n -> ChannelStateMeter.poll(registry, n, state));
    }

    @Override
    public java.util.Set<String> channels() {
        return java.util.Set.copyOf(meters.keySet());
    }

    @Override
    public synchronized void close() {
        meters.values().forEach(ChannelStateMeter::close);
        meters.clear();
    }
}
