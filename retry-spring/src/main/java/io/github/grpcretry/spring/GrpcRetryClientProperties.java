package io.github.grpcretry.spring;

import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.Resource;
import org.springframework.util.unit.DataSize;

/**
 * The settings of one channel, {@code grpc.retry.clients.<channel>} (or of {@code GLOBAL}), bound alike on
 * both Spring Boot lines; unset fields (null) are inherited from GLOBAL. Each line's
 * {@code GrpcRetryProperties} binds its {@code clients} map to this type, and
 * {@link SpringBoundValues#client} hands a bound channel to the configuration resolver.
 *
 * @param serviceConfig the channel's service config: method entries and retry throttling, laid over
 *     service-config-file (and, on the Spring Boot 4.1 line, over Spring Boot's own service config)
 * @param serviceConfigFile a standard gRPC service config JSON (classpath: or file:), e.g.
 *     classpath:service-config.json, at most 1MB; its methodConfig and retryThrottling apply (a
 *     loadBalancingConfig stops start-up); the typed service-config properties are laid over it
 * @param budget a retry budget (beyond A6): retries as a share of calls over a sliding window; off
 *     unless ratio is set; interceptor engine only
 * @param maxAttemptsCap channel-wide cap on attempts (grpc-java's maxRetryAttempts / maxHedgedAttempts);
 *     larger max-attempts are capped with a start-up warning; 1 to 100 (1 turns retries off); default 5
 * @param perRpcBufferLimit buffered request bytes per call; past it the call is committed (no more
 *     retries); default 1MB
 * @param retryBufferSize channel-wide total of buffered request bytes for retries; default 16MB
 * @param connectTimeout TCP connect timeout of the channel (Netty channels; ignored for in-process
 *     channels)
 * @param resilience4jRetry name of a resilience4j Retry instance supplying the retry policy of this
 *     channel's methods that have none of their own
 * @param retryInfo whether a server's google.rpc.RetryInfo (in the grpc-status-details-bin trailer) sets the
 *     delay before the next retry (interceptor engine; needs grpc-protobuf); default true
 * @param retryInfoMaxDelay the longest RetryInfo delay a call without deadline waits; a longer one stops
 *     retrying; default 30s
 * @param adaptiveHedging a hedging delay that follows each hedged method's observed latency (interceptor
 *     engine)
 * @param avoidTriedBackends whether a retry or a hedge goes to a backend the call has not tried when the channel's
 *     load balancer has one ready (interceptor engine); default true
 * @param backendPicks how many picks the load balancer is asked for, at most, before such an attempt goes to a
 *     tried backend anyway; 1 to 10; default 5
 * @param streams the settings of streaming calls (interceptor engine)
 */
public record GrpcRetryClientProperties(
        @Nullable ServiceConfig serviceConfig,
        @Nullable Resource serviceConfigFile,
        @Nullable Budget budget,
        @Nullable Integer maxAttemptsCap,
        @Nullable DataSize perRpcBufferLimit,
        @Nullable DataSize retryBufferSize,
        @Nullable Duration connectTimeout,
        @Nullable String resilience4jRetry,
        @Nullable Boolean retryInfo,
        @Nullable Duration retryInfoMaxDelay,
        @Nullable AdaptiveHedging adaptiveHedging,
        @Nullable Boolean avoidTriedBackends,
        @Nullable Integer backendPicks,
        @Nullable Streams streams) {

    /**
     * The settings of streaming calls.
     *
     * @param idleTimeout how long an attempt of a server- or bidi-streaming call may receive nothing (headers or a
     *     message) before it is cancelled and ends as UNAVAILABLE (the method's policy decides the rest); &gt; 0;
     *     optional (no idle timeout)
     * @param maxResumes how many times one server-streaming call is resumed after its commit (methods with a
     *     StreamResumption bean); 0 turns resumption off; default 3
     */
    public record Streams(@Nullable Duration idleTimeout, @Nullable Integer maxResumes) {
    }

    /**
     * The adaptive hedging delay: per hedged method, the (1 - max-extra-load) quantile of its recent call
     * latency.
     *
     * @param enabled whether the channel's hedged methods take their delay from observed latency; default false
     * @param maxExtraLoad hedges as a share of calls, at most, in (0, 0.5]; the delay is the (1 - this)
     *     quantile of the method's recent call latency; default 0.05
     * @param minDelay lower bound of the delay; default 1ms
     * @param maxDelay upper bound of the delay; optional
     * @param minSamples calls of a method seen before its delay adapts (until then hedging.delay applies);
     *     default 100
     * @param window the latency window, 1s..1h; default 30s
     */
    public record AdaptiveHedging(@Nullable Boolean enabled, @Nullable Double maxExtraLoad,
            @Nullable Duration minDelay, @Nullable Duration maxDelay, @Nullable Integer minSamples,
            @Nullable Duration window) {
    }

    /**
     * A service config: the method entries and retry throttling.
     *
     * @param method the method entries; the most specific name matching a call wins (service and method,
     *     then service, then neither)
     * @param retrythrottling the A6 token bucket of the channel
     */
    public record ServiceConfig(@Nullable List<@Nullable Method> method, @Nullable Throttling retrythrottling) {
    }

    /**
     * One method entry.
     *
     * @param name the methods it applies to; none = every method of the channel
     * @param waitForReady whether calls wait for the channel to be ready instead of failing fast
     * @param timeout default deadline of calls to these methods
     * @param maxRequestMessage largest request message
     * @param maxResponseMessage largest response message
     * @param retry the retry policy (not together with hedging)
     * @param hedging the hedging policy (not together with retry)
     */
    public record Method(
            @Nullable List<@Nullable Name> name,
            @Nullable Boolean waitForReady,
            @Nullable Duration timeout,
            @Nullable DataSize maxRequestMessage,
            @Nullable DataSize maxResponseMessage,
            @Nullable Retry retry,
            @Nullable Hedging hedging) {
    }

    /**
     * Which methods an entry applies to.
     *
     * @param service fully-qualified service ("shop.Inventory"); absent = every service
     * @param method method name ("Reserve"); absent = every method of the service
     */
    public record Name(@Nullable String service, @Nullable String method) {
    }

    /**
     * A retry policy (gRFC A6).
     *
     * @param maxAttempts attempts in all, the first included; at least 2; capped by max-attempts-cap
     * @param initialBackoff the first backoff; &gt; 0
     * @param maxBackoff the largest backoff; &gt; 0
     * @param backoffMultiplier growth of the backoff per attempt; &gt; 0
     * @param retryableStatusCodes status codes that are retried: names in any case (unavailable,
     *     UNAVAILABLE) or numbers (14); not empty, never OK
     * @param perAttemptReceiveTimeout time an attempt may wait for the response before it is retried;
     *     &gt; 0, optional
     */
    public record Retry(
            @Nullable Integer maxAttempts,
            @Nullable Duration initialBackoff,
            @Nullable Duration maxBackoff,
            @Nullable Double backoffMultiplier,
            @Nullable List<Status.Code> retryableStatusCodes,
            @Nullable Duration perAttemptReceiveTimeout) {
    }

    /**
     * A hedging policy (gRFC A6).
     *
     * @param maxAttempts attempts in all, the first included; at least 2; capped by max-attempts-cap
     * @param delay time between the start of one attempt and the next; &gt;= 0 (0 sends them all at once)
     * @param nonFatalStatusCodes status codes after which the other attempts go on: names in any case or
     *     numbers
     */
    public record Hedging(@Nullable Integer maxAttempts, @Nullable Duration delay,
            @Nullable List<Status.Code> nonFatalStatusCodes) {
    }

    /**
     * Retry throttling (gRFC A6): a token bucket per channel.
     *
     * @param maxTokens the bucket's capacity, in (0, 1000]
     * @param tokenRatio tokens a success gives back, &gt; 0 (three decimals kept)
     */
    public record Throttling(@Nullable Double maxTokens, @Nullable Double tokenRatio) {
    }

    /**
     * A retry budget.
     *
     * @param ratio retries allowed as a share of calls, in (0, 1] (0.1 = 10 %); unset = no budget
     * @param minRetriesPerSecond floor that lets low-traffic clients retry; &gt;= 0; default 10
     * @param ttl window over which calls count toward the ratio, 1s..60s; default 10s
     */
    public record Budget(@Nullable Double ratio, @Nullable Double minRetriesPerSecond, @Nullable Duration ttl) {
    }
}
