package io.github.grpcretry.policy;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Everything the engines need to know about one channel, after the file and the typed properties
 * were merged, GLOBAL applied, values validated and attempts capped.
 *
 * @param serviceConfig the effective service config (channel entries layered over GLOBAL's); the record caps
 *     the attempts of its policies at {@code maxAttemptsCap}, so the engines run it as it is
 * @param maxAttemptsCap the most attempts a call makes, at least 1
 * @param budget the channel's retry budget; absent when the channel has none
 * @param connectTimeout absent when not set
 * @param resilience4jRetry name of a resilience4j Retry instance; absent when not set
 * @param retryInfo whether the interceptor engine takes a server's {@code google.rpc.RetryInfo} delay as the
 *     next backoff
 * @param retryInfoMaxDelay the longest such delay a call without deadline waits (a longer one stops retrying)
 * @param adaptiveHedging the adaptive hedging delay of the channel's hedged methods; absent = the fixed delay
 * @param avoidTriedBackends whether the interceptor engine sends a retry or a hedge to a backend its call has not
 *     tried when the channel's load balancer has one ready ({@code avoid-tried-backends})
 * @param backendPicks how many picks the balancer is asked for, at most, before such an attempt goes to a tried
 *     backend anyway, 1 to 10 ({@code backend-picks})
 * @param streams the interceptor engine's settings for streaming calls ({@code streams.*})
 */
public record ChannelRetryConfig(
        String channel,
        ServiceConfig serviceConfig,
        int maxAttemptsCap,
        long perRpcBufferLimit,
        long retryBufferSize,
        @Nullable RetryBudgetPolicy budget,
        @Nullable Duration connectTimeout,
        @Nullable String resilience4jRetry,
        boolean retryInfo,
        Duration retryInfoMaxDelay,
        @Nullable AdaptiveHedgingPolicy adaptiveHedging,
        boolean avoidTriedBackends,
        int backendPicks,
        Streams streams) {

    public static final int DEFAULT_MAX_ATTEMPTS_CAP = 5;
    public static final long DEFAULT_PER_RPC_BUFFER_LIMIT = 1L << 20;
    public static final long DEFAULT_RETRY_BUFFER_SIZE = 16L << 20;
    public static final Duration DEFAULT_RETRY_INFO_MAX_DELAY = Duration.ofSeconds(30);
    public static final int DEFAULT_BACKEND_PICKS = 5;
    public static final int MAX_BACKEND_PICKS = 10;

    public ChannelRetryConfig {
        Objects.requireNonNull(channel, "channel");
        if (maxAttemptsCap < 1) {
            throw new IllegalArgumentException("maxAttemptsCap must be >= 1: " + maxAttemptsCap);
        }
        // The one place a channel's policies are capped (docs/design.md §13): whatever builds the record, the
        // engine runs at most maxAttemptsCap attempts of a configured or resolver-supplied policy.
        serviceConfig = serviceConfig.capped(maxAttemptsCap);
        Objects.requireNonNull(retryInfoMaxDelay, "retryInfoMaxDelay");
        Objects.requireNonNull(streams, "streams");
        if (backendPicks < 1 || backendPicks > MAX_BACKEND_PICKS) {
            throw new IllegalArgumentException("backendPicks must be between 1 and " + MAX_BACKEND_PICKS + ": " + backendPicks);
        }
    }

    /**
     * These channel-wide settings for {@code channel} with {@code serviceConfig}: how a configuration made once
     * (GLOBAL's, or a channel's with a name resolver's policies laid under it) serves another channel or service
     * config, every other setting kept.
     */
    public ChannelRetryConfig withServiceConfig(String channel, ServiceConfig serviceConfig) {
        return new ChannelRetryConfig(channel, serviceConfig, maxAttemptsCap, perRpcBufferLimit, retryBufferSize, budget,
                connectTimeout, resilience4jRetry, retryInfo, retryInfoMaxDelay, adaptiveHedging, avoidTriedBackends,
                backendPicks, streams);
    }

    /** This channel with another attempt cap (at least 1), its policies capped anew. */
    public ChannelRetryConfig withMaxAttemptsCap(int cap) {
        return new ChannelRetryConfig(channel, serviceConfig, cap, perRpcBufferLimit, retryBufferSize, budget,
                connectTimeout, resilience4jRetry, retryInfo, retryInfoMaxDelay, adaptiveHedging, avoidTriedBackends,
                backendPicks, streams);
    }

    /** This channel with other buffer limits: per call and the channel's total, in bytes. */
    public ChannelRetryConfig withBuffers(long perRpc, long total) {
        return new ChannelRetryConfig(channel, serviceConfig, maxAttemptsCap, perRpc, total, budget, connectTimeout,
                resilience4jRetry, retryInfo, retryInfoMaxDelay, adaptiveHedging, avoidTriedBackends, backendPicks, streams);
    }

    /** This channel with another retry budget (absent = none). */
    public ChannelRetryConfig withBudget(@Nullable RetryBudgetPolicy newBudget) {
        return new ChannelRetryConfig(channel, serviceConfig, maxAttemptsCap, perRpcBufferLimit, retryBufferSize,
                newBudget, connectTimeout, resilience4jRetry, retryInfo, retryInfoMaxDelay, adaptiveHedging,
                avoidTriedBackends, backendPicks, streams);
    }

    /** This channel with another resilience4j Retry instance for its methods without a policy (absent = none). */
    public ChannelRetryConfig withResilience4jRetry(@Nullable String instance) {
        return new ChannelRetryConfig(channel, serviceConfig, maxAttemptsCap, perRpcBufferLimit, retryBufferSize, budget,
                connectTimeout, instance, retryInfo, retryInfoMaxDelay, adaptiveHedging, avoidTriedBackends,
                backendPicks, streams);
    }

    /** This channel with other RetryInfo settings. */
    public ChannelRetryConfig withRetryInfo(boolean honoured, Duration maxDelay) {
        return new ChannelRetryConfig(channel, serviceConfig, maxAttemptsCap, perRpcBufferLimit, retryBufferSize, budget,
                connectTimeout, resilience4jRetry, honoured, maxDelay, adaptiveHedging, avoidTriedBackends, backendPicks,
                streams);
    }

    /** This channel with another adaptive hedging setting (absent = off). */
    public ChannelRetryConfig withAdaptiveHedging(@Nullable AdaptiveHedgingPolicy adaptive) {
        return new ChannelRetryConfig(channel, serviceConfig, maxAttemptsCap, perRpcBufferLimit, retryBufferSize, budget,
                connectTimeout, resilience4jRetry, retryInfo, retryInfoMaxDelay, adaptive, avoidTriedBackends, backendPicks,
                streams);
    }

    /** This channel with other settings for avoiding tried backends ({@code picks}: 1 to 10). */
    public ChannelRetryConfig withTriedBackends(boolean avoid, int picks) {
        return new ChannelRetryConfig(channel, serviceConfig, maxAttemptsCap, perRpcBufferLimit, retryBufferSize, budget,
                connectTimeout, resilience4jRetry, retryInfo, retryInfoMaxDelay, adaptiveHedging, avoid, picks, streams);
    }

    /** This channel with other settings for streaming calls. */
    public ChannelRetryConfig withStreams(Streams settings) {
        return new ChannelRetryConfig(channel, serviceConfig, maxAttemptsCap, perRpcBufferLimit, retryBufferSize, budget,
                connectTimeout, resilience4jRetry, retryInfo, retryInfoMaxDelay, adaptiveHedging, avoidTriedBackends,
                backendPicks, settings);
    }

    /**
     * The interceptor engine's settings for streaming calls ({@code grpc.retry.clients.<channel>.streams.*}).
     *
     * @param idleTimeout how long an attempt of a server- or bidi-streaming call may receive nothing (headers or
     *     a message) while the application waits for a response, before it is cancelled and ends as UNAVAILABLE;
     *     absent = no limit
     * @param maxResumes how many times one server-streaming call is resumed after its commit (methods with a
     *     {@code StreamResumption}); 0 = never
     */
    public record Streams(@Nullable Duration idleTimeout, int maxResumes) {

        public static final int DEFAULT_MAX_RESUMES = 3;

        /** No idle timeout, {@link #DEFAULT_MAX_RESUMES} resumptions. */
        public static final Streams DEFAULT = new Streams(null, DEFAULT_MAX_RESUMES);

        public Streams {
            if (idleTimeout != null && (idleTimeout.isNegative() || idleTimeout.isZero())) {
                throw new IllegalArgumentException("idleTimeout must be positive: " + idleTimeout);
            }
            if (maxResumes < 0) {
                throw new IllegalArgumentException("maxResumes must be >= 0: " + maxResumes);
            }
        }
    }

    /** A channel with the given service config and every other setting at its default. */
    public static ChannelRetryConfig of(String channel, ServiceConfig serviceConfig) {
        return new ChannelRetryConfig(channel, serviceConfig, DEFAULT_MAX_ATTEMPTS_CAP,
                DEFAULT_PER_RPC_BUFFER_LIMIT, DEFAULT_RETRY_BUFFER_SIZE, null, null, null, true,
                DEFAULT_RETRY_INFO_MAX_DELAY, null, true, DEFAULT_BACKEND_PICKS, Streams.DEFAULT);
    }
}
