package io.github.grpcretry.internal.config;

import io.github.grpcretry.policy.ServiceConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Everything configured for one channel (or GLOBAL), not yet validated: its service config (the
 * file and the typed properties already merged) and its channel-wide settings.
 *
 * @param path the channel's property prefix, e.g. {@code grpc.retry.clients.inventory}
 */
public record ChannelDraft(
        String channel,
        String path,
        ServiceConfigDraft serviceConfig,
        @Nullable Sourced<Double> budgetRatio,
        @Nullable Sourced<Double> budgetMinRetriesPerSecond,
        @Nullable Sourced<Duration> budgetTtl,
        @Nullable Sourced<Integer> maxAttemptsCap,
        @Nullable Sourced<Long> perRpcBufferLimit,
        @Nullable Sourced<Long> retryBufferSize,
        @Nullable Sourced<Duration> connectTimeout,
        @Nullable Sourced<String> resilience4jRetry,
        @Nullable Sourced<Boolean> retryInfo,
        @Nullable Sourced<Duration> retryInfoMaxDelay,
        AdaptiveHedgingDraft adaptiveHedging,
        @Nullable Sourced<Boolean> avoidTriedBackends,
        @Nullable Sourced<Integer> backendPicks) {

    /** A channel without the settings for tried backends. */
    public ChannelDraft(String channel, String path, ServiceConfigDraft serviceConfig,
            @Nullable Sourced<Double> budgetRatio, @Nullable Sourced<Double> budgetMinRetriesPerSecond,
            @Nullable Sourced<Duration> budgetTtl, @Nullable Sourced<Integer> maxAttemptsCap,
            @Nullable Sourced<Long> perRpcBufferLimit, @Nullable Sourced<Long> retryBufferSize,
            @Nullable Sourced<Duration> connectTimeout, @Nullable Sourced<String> resilience4jRetry,
            @Nullable Sourced<Boolean> retryInfo, @Nullable Sourced<Duration> retryInfoMaxDelay,
            AdaptiveHedgingDraft adaptiveHedging) {
        this(channel, path, serviceConfig, budgetRatio, budgetMinRetriesPerSecond, budgetTtl, maxAttemptsCap,
                perRpcBufferLimit, retryBufferSize, connectTimeout, resilience4jRetry, retryInfo, retryInfoMaxDelay,
                adaptiveHedging, null, null);
    }

    /** The {@code adaptive-hedging.*} settings of a channel as configured (each may be unset). */
    public record AdaptiveHedgingDraft(
            @Nullable Sourced<Boolean> enabled,
            @Nullable Sourced<Double> maxExtraLoad,
            @Nullable Sourced<Duration> minDelay,
            @Nullable Sourced<Duration> maxDelay,
            @Nullable Sourced<Integer> minSamples,
            @Nullable Sourced<Duration> window) {

        /** Nothing set. */
        public static final AdaptiveHedgingDraft EMPTY = new AdaptiveHedgingDraft(null, null, null, null, null, null);

        /** These settings with every one left unset taken from {@code under}. */
        public AdaptiveHedgingDraft overlay(AdaptiveHedgingDraft under) {
            return new AdaptiveHedgingDraft(Sourced.firstSet(enabled, under.enabled),
                    Sourced.firstSet(maxExtraLoad, under.maxExtraLoad), Sourced.firstSet(minDelay, under.minDelay),
                    Sourced.firstSet(maxDelay, under.maxDelay), Sourced.firstSet(minSamples, under.minSamples),
                    Sourced.firstSet(window, under.window));
        }

        /** Every setting that is set, as {@code path = value}. */
        public List<String> setPlaces() {
            List<String> out = new ArrayList<>();
            for (Sourced<?> s : Arrays.asList(enabled, maxExtraLoad, minDelay, maxDelay, minSamples, window)) {
                if (s != null) {
                    out.add(s.path() + " = " + s.display());
                }
            }
            return out;
        }
    }

    public ChannelDraft {
        Objects.requireNonNull(channel, "channel");
        Objects.requireNonNull(path, "path");
        serviceConfig = serviceConfig == null ? ServiceConfigDraft.EMPTY : serviceConfig;
        adaptiveHedging = adaptiveHedging == null ? AdaptiveHedgingDraft.EMPTY : adaptiveHedging;
    }

    /** A channel with nothing set. */
    public static ChannelDraft empty(String channel, String path) {
        return new ChannelDraft(channel, path, ServiceConfigDraft.EMPTY, null, null, null, null, null, null, null, null, null,
                null, AdaptiveHedgingDraft.EMPTY);
    }

    /** This channel with another service config. */
    public ChannelDraft withServiceConfig(ServiceConfigDraft newServiceConfig) {
        return new ChannelDraft(channel, path, newServiceConfig, budgetRatio, budgetMinRetriesPerSecond, budgetTtl,
                maxAttemptsCap, perRpcBufferLimit, retryBufferSize, connectTimeout, resilience4jRetry, retryInfo,
                retryInfoMaxDelay, adaptiveHedging, avoidTriedBackends, backendPicks);
    }

    /**
     * This channel with every setting it leaves unset taken from {@code global}, field by field:
     * budget.*, max-attempts-cap, the buffer limits, connect-timeout, resilience4j-retry, retry-info,
     * retry-info-max-delay, adaptive-hedging.*, avoid-tried-backends, backend-picks and the retrythrottling fields. Method entries are not copied: they are layered at match time
     * ({@link ServiceConfig#layeredOver}).
     */
    public ChannelDraft inheriting(ChannelDraft global) {
        if (global == null || global == this) {
            return this;
        }
        RetryThrottlingDraft own = serviceConfig.retryThrottling();
        RetryThrottlingDraft inherited = global.serviceConfig.retryThrottling();
        RetryThrottlingDraft t = own == null ? inherited : own.overlay(inherited);
        return new ChannelDraft(channel, path,
                new ServiceConfigDraft(serviceConfig.methodConfigs(), t),
                Sourced.firstSet(budgetRatio, global.budgetRatio),
                Sourced.firstSet(budgetMinRetriesPerSecond, global.budgetMinRetriesPerSecond),
                Sourced.firstSet(budgetTtl, global.budgetTtl),
                Sourced.firstSet(maxAttemptsCap, global.maxAttemptsCap),
                Sourced.firstSet(perRpcBufferLimit, global.perRpcBufferLimit),
                Sourced.firstSet(retryBufferSize, global.retryBufferSize),
                Sourced.firstSet(connectTimeout, global.connectTimeout),
                Sourced.firstSet(resilience4jRetry, global.resilience4jRetry),
                Sourced.firstSet(retryInfo, global.retryInfo),
                Sourced.firstSet(retryInfoMaxDelay, global.retryInfoMaxDelay),
                adaptiveHedging.overlay(global.adaptiveHedging),
                Sourced.firstSet(avoidTriedBackends, global.avoidTriedBackends),
                Sourced.firstSet(backendPicks, global.backendPicks));
    }
}
