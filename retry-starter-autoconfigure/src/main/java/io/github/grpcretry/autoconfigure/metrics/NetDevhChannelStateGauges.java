package io.github.grpcretry.autoconfigure.metrics;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.spring.metrics.RetryGauges;
import io.github.grpcretry.spring.report.ChannelStateSource;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The {@code grpc.client.channel.state} gauges of net.devh's channels, as a {@link MeterBinder}: Spring
 * Boot binds it once every singleton exists, by when net.devh has built the channels of the
 * {@code @GrpcClient} beans. Each channel that is configured or that the {@link ChannelStateSource}
 * knows gets one gauge set, read from the source on every scrape. Closing it (with the context) removes
 * the gauges.
 */
public class NetDevhChannelStateGauges implements MeterBinder, AutoCloseable {

    private final ObjectProvider<ChannelRetryConfigs> configs;
    private final ObjectProvider<ChannelStateSource> states;
    private final List<RetryGauges.ChannelStates> bound = new CopyOnWriteArrayList<>();

    public NetDevhChannelStateGauges(ObjectProvider<ChannelRetryConfigs> configs,
            ObjectProvider<ChannelStateSource> states) {
        this.configs = configs;
        this.states = states;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        ChannelStateSource source = states.getIfAvailable(() -> ChannelStateSource.NONE);
        Set<String> channels = new TreeSet<>(source.states().keySet());
        configs.ifAvailable(c -> channels.addAll(c.configuredChannels()));
        RetryGauges.ChannelStates meters = RetryGauges.channelStates(registry);
        channels.forEach(channel -> meters.poll(channel, () -> source.states().get(channel)));
        bound.add(meters);
    }

    @Override
    public void close() {
        bound.forEach(RetryGauges.ChannelStates::close);
        bound.clear();
    }
}
