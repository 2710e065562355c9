package io.github.grpcretry.spring.metrics;

import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.metrics.RetryMeterNames;
import io.github.grpcretry.spring.reload.ReloadableChannels;
import io.github.grpcretry.throttle.RetryThrottle;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The limiter gauges of docs/design.md §15 for every channel of a {@link RetryLimiterRegistry}:
 * {@value RetryMeterNames#TOKENS} and {@value RetryMeterNames#TOKENS_MAX} for each throttle,
 * {@value RetryMeterNames#BUDGET_BALANCE} for each budget (tag {@code client}).
 *
 * <p>Limiters are created lazily, when a channel is built; this binder listens to the registry and
 * binds the gauges of a limiter the moment it is created (and those of existing limiters at once).
 * The gauges read the limiters' atomics when scraped; nothing is added to the call path.
 * Channels of the native engine have no limiters here (grpc-java keeps its own bucket and does not
 * expose it), so they get no token gauges: none are invented. Made by {@link RetryGauges#limiters}.
 */
final class RetryLimiterGauges implements MeterBinder, RetryLimiterRegistry.LimiterListener {

    private final RetryLimiterRegistry limiters;
    private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();

    RetryLimiterGauges(RetryLimiterRegistry limiters) {
        this.limiters = Objects.requireNonNull(limiters, "limiters");
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        if (registries.contains(registry)) {
            return;
        }
        registries.add(registry);
        if (registries.size() == 1) {
            limiters.addListener(this);
        } else {
            limiters.channels().forEach(channel -> {
                limiters.throttle(channel).ifPresent(t -> bindThrottle(registry, channel));
                limiters.budget(channel).ifPresent(b -> bindBudget(registry, channel));
            });
        }
    }

    @Override
    public void throttleCreated(String channel, RetryThrottle throttle) {
        for (MeterRegistry registry : registries) {
            bindThrottle(registry, channel);
        }
    }

    @Override
    public void budgetCreated(String channel, RetryBudget budget) {
        for (MeterRegistry registry : registries) {
            bindBudget(registry, channel);
        }
    }

    /*
     * The gauges read the channel's limiter from the registry when scraped, not the object that was
     * created: a run-time reload may put a new throttle or budget in its place (ReloadableChannels), and
     * the gauge, registered once per name and tags, must follow it.
     */
    private void bindThrottle(MeterRegistry registry, String channel) {
        Gauge.builder(RetryMeterNames.TOKENS, limiters, l -> l.throttle(channel).map(RetryThrottle::tokens).orElse(Double.NaN))
                .description("Current tokens of the channel's A6 retry throttle")
                .baseUnit("tokens")
                .tag(RetryMeterNames.TAG_CLIENT, channel)
                .strongReference(true)
                .register(registry);
        Gauge.builder(RetryMeterNames.TOKENS_MAX, limiters, l -> l.throttle(channel).map(RetryThrottle::maxTokens).orElse(Double.NaN))
                .description("Capacity of the channel's A6 retry throttle")
                .tag(RetryMeterNames.TAG_CLIENT, channel)
                .strongReference(true)
                .register(registry);
    }

    private void bindBudget(MeterRegistry registry, String channel) {
        Gauge.builder(RetryMeterNames.BUDGET_BALANCE, limiters, l -> l.budget(channel).map(RetryBudget::balance).orElse(Double.NaN))
                .description("Retries the channel's retry budget permits now")
                .tag(RetryMeterNames.TAG_CLIENT, channel)
                .strongReference(true)
                .register(registry);
    }
}
