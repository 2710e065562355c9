package io.github.grpcretry.spring;

import io.github.grpcretry.metrics.RetryMeterNames;
import io.github.grpcretry.spring.reload.ReloadableChannels;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * {@value RetryMeterNames#CONFIG_RELOADS} (tags {@code client}, {@code outcome} = applied, unchanged, rejected,
 * restart_required, failed): run-time
 * reloads per channel. Every configured channel's five counters are registered at 0 when bound, so a
 * rate or an increase over them is defined before the first reload.
 */
final class ReloadCounter implements MeterBinder {

    private final ReloadableChannels channels;
    private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();

    ReloadCounter(ReloadableChannels channels) {
        this.channels = channels;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        registries.add(registry);
        for (String channel : channels.configuredChannels()) {
            for (ReloadableChannels.Outcome outcome : ReloadableChannels.Outcome.values()) {
                counter(registry, channel, outcome);
            }
        }
    }

    void count(String channel, ReloadableChannels.Outcome outcome) {
        for (MeterRegistry registry : registries) {
            counter(registry, channel, outcome).increment();
        }
    }

    private static Counter counter(MeterRegistry registry, String channel, ReloadableChannels.Outcome outcome) {
        return Counter.builder(RetryMeterNames.CONFIG_RELOADS)
                .description("Run-time changes of the channel's retry configuration, by outcome")
                .tag(RetryMeterNames.TAG_CLIENT, channel)
                .tag(RetryMeterNames.TAG_OUTCOME, outcome.tag())
                .register(registry);
    }
}
