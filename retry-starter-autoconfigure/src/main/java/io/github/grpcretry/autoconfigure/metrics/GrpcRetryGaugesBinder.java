package io.github.grpcretry.autoconfigure.metrics;

import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.integration.ChannelStateSource;
import io.github.grpcretry.integration.RetryGauges;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * Binds the gauges once every singleton exists (net.devh builds its channels while the
 * {@code @GrpcClient} beans are created): the limiter gauges of the {@link RetryLimiterRegistry}
 * (and, through its listener, of every limiter created later) and a
 * {@code grpc.client.channel.state} gauge set for every channel that is configured or that the
 * {@link ChannelStateSource} knows. Channels first built after start-up get their state gauges
 * from {@link #bindChannel(String)}.
 */
public class GrpcRetryGaugesBinder implements SmartInitializingSingleton, DisposableBean {

    private final MeterRegistry registry;
    private final ObjectProvider<RetryLimiterRegistry> limiters;
    private final ObjectProvider<ChannelRetryConfigs> configs;
    private final ObjectProvider<ChannelStateSource> states;
    private final RetryGauges.ChannelStates stateMeters;
    private volatile ChannelStateSource source;

    public GrpcRetryGaugesBinder(MeterRegistry registry, ObjectProvider<RetryLimiterRegistry> limiters,
            ObjectProvider<ChannelRetryConfigs> configs, ObjectProvider<ChannelStateSource> states) {
        this.registry = registry;
        this.limiters = limiters;
        this.configs = configs;
        this.states = states;
        this.stateMeters = RetryGauges.channelStates(registry);
    }

    @Override
    public void afterSingletonsInstantiated() {
        limiters.ifAvailable(l -> RetryGauges.limiters(l).bindTo(registry));
        Set<String> channels = new TreeSet<>();
        configs.ifAvailable(c -> channels.addAll(c.configuredChannels()));
        channels.addAll(source().states().keySet());
        channels.forEach(this::bindChannel);
    }

    /** Binds the connectivity gauges of {@code channel} (once). */
    public void bindChannel(String channel) {
        stateMeters.poll(channel, () -> source().states().get(channel));
    }

    private ChannelStateSource source() {
        ChannelStateSource s = source;
        if (s == null) {
            s = states.getIfAvailable(() -> ChannelStateSource.NONE);
            source = s;
        }
        return s;
    }

    @Override
    public void destroy() {
        stateMeters.close();
    }
}
