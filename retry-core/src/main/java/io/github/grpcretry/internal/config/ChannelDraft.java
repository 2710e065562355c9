package io.github.grpcretry.internal.config;

import io.github.grpcretry.policy.ServiceConfig;
import java.time.Duration;
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
        @Nullable Sourced<String> resilience4jRetry) {

    public ChannelDraft {
        Objects.requireNonNull(channel, "channel");
        Objects.requireNonNull(path, "path");
        serviceConfig = serviceConfig == null ? ServiceConfigDraft.EMPTY : serviceConfig;
    }

    /** A channel with nothing set. */
    public static ChannelDraft empty(String channel, String path) {
        return new ChannelDraft(channel, path, ServiceConfigDraft.EMPTY, null, null, null, null, null, null, null, null);
    }

    /** This channel with another service config. */
    public ChannelDraft withServiceConfig(ServiceConfigDraft newServiceConfig) {
        return new ChannelDraft(channel, path, newServiceConfig, budgetRatio, budgetMinRetriesPerSecond, budgetTtl,
                maxAttemptsCap, perRpcBufferLimit, retryBufferSize, connectTimeout, resilience4jRetry);
    }

    /**
     * This channel with every setting it leaves unset taken from {@code global}, field by field:
     * budget.*, max-attempts-cap, the buffer limits, connect-timeout, resilience4j-retry and the
     * retrythrottling fields. Method entries are not copied: they are layered at match time
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
                Sourced.firstSet(resilience4jRetry, global.resilience4jRetry));
    }
}
