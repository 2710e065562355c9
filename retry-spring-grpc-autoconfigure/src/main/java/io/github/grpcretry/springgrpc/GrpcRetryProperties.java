package io.github.grpcretry.springgrpc;

import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.core.io.Resource;
import org.springframework.util.unit.DataSize;

/**
 * The {@code grpc.retry.*} property tree on the Spring Boot 4.1 line: the same keys as on the Spring
 * Boot 3.5 line (a team's YAML carries over unchanged). A channel is named as Spring gRPC names it: the
 * name given to {@code GrpcChannelFactory.createChannel(name)} or {@code @ImportGrpcClients(target =
 * name)}, the key under {@code spring.grpc.client.channel}.
 *
 * @param enabled whether the gRPC retry starter is active
 * @param engine which engine does the retrying: "interceptor" (this project's engine, a client
 *     interceptor; every decision observable) or "native" (grpc-java's own retry, configured from the
 *     same properties)
 * @param clients per-channel settings, keyed by the Spring gRPC channel name; the key GLOBAL holds
 *     defaults that every channel inherits field by field. An in-process channel's name starts with
 *     "in-process:" and needs the bracket form: grpc.retry.clients.[in-process:inventory]
 * @param guard the server-side amplification guard
 * @param deadline deadline propagation and cascade defence
 * @param health the grpcRetry health contributor
 * @param observation per-attempt observations (docs/observability.md)
 * @param ignoreUnknownProperties whether a key under grpc.retry (or under the retry, hedging and
 *     retrythrottling parts of {@code spring.grpc.client.channel.<name>.service-config}) that binds to nothing
 *     is logged as one WARN instead of stopping start-up
 */
@ConfigurationProperties("grpc.retry")
public record GrpcRetryProperties(
        @DefaultValue("true") boolean enabled,
        @DefaultValue("interceptor") Engine engine,
        Map<String, Client> clients,
        @DefaultValue Guard guard,
        @DefaultValue Deadline deadline,
        @DefaultValue Health health,
        @DefaultValue Observation observation,
        @DefaultValue("false") boolean ignoreUnknownProperties) {

    public GrpcRetryProperties {
        clients = clients == null ? Map.of() : clients;
    }

    /** The two engines. */
    public enum Engine {
        /** This project's engine, a client interceptor per channel. */
        INTERCEPTOR,
        /** grpc-java's own retry, configured from these properties. */
        NATIVE
    }

    /**
     * The settings of one channel (or of GLOBAL); unset fields are inherited from GLOBAL.
     *
     * @param serviceConfig the channel's service config: method entries and retry throttling, in the
     *     shape of spring.grpc.client.channel.&lt;name&gt;.service-config, laid over that one (the base layer)
     *     and over service-config-file
     * @param serviceConfigFile a standard gRPC service config JSON (classpath: or file:), e.g.
     *     classpath:service-config.json; the typed service-config properties are laid over it
     * @param budget a retry budget (beyond A6): retries as a share of calls over a sliding window; off
     *     unless ratio is set
     * @param maxAttemptsCap channel-wide cap on attempts (grpc-java's maxRetryAttempts /
     *     maxHedgedAttempts); larger max-attempts are capped with a start-up warning; at least 1 (1 turns
     *     retries off); default 5
     * @param perRpcBufferLimit buffered request bytes per call; past it the call is committed (no more
     *     retries); default 1MB
     * @param retryBufferSize channel-wide total of buffered request bytes for retries; default 16MB
     * @param connectTimeout TCP connect timeout of the channel (Netty channels; ignored for in-process
     *     channels)
     * @param resilience4jRetry name of a resilience4j Retry instance supplying the retry policy of this
     *     channel's methods that have none of their own
     */
    public record Client(
            @Nullable ServiceConfig serviceConfig,
            @Nullable Resource serviceConfigFile,
            @Nullable Budget budget,
            @Nullable Integer maxAttemptsCap,
            @Nullable DataSize perRpcBufferLimit,
            @Nullable DataSize retryBufferSize,
            @Nullable Duration connectTimeout,
            @Nullable String resilience4jRetry) {
    }

    /**
     * A service config: the method entries and retry throttling.
     *
     * @param method the method entries; the most specific name matching a call wins (service and
     *     method, then service, then neither)
     * @param retrythrottling the A6 token bucket of the channel
     */
    public record ServiceConfig(@Nullable List<Method> method, @Nullable Throttling retrythrottling) {
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
            @Nullable List<Name> name,
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
     * @param maxAttempts attempts in all, the first included; at least 2
     * @param initialBackoff the first backoff; > 0
     * @param maxBackoff the largest backoff; > 0
     * @param backoffMultiplier growth of the backoff per attempt; > 0
     * @param retryableStatusCodes status codes that are retried: names in any case (unavailable,
     *     UNAVAILABLE) or numbers; never OK
     * @param perAttemptReceiveTimeout time an attempt may wait for the response before it is retried;
     *     > 0, optional
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
     * @param maxAttempts attempts in all, the first included; at least 2
     * @param delay time between the start of one attempt and the next; >= 0
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
     * @param tokenRatio tokens a success gives back, > 0 (three decimals kept)
     */
    public record Throttling(@Nullable Double maxTokens, @Nullable Double tokenRatio) {
    }

    /**
     * A retry budget.
     *
     * @param ratio retries allowed as a share of calls (0.1 = 10 %); unset = no budget
     * @param minRetriesPerSecond floor that lets low-traffic clients retry; default 10
     * @param ttl window over which calls count toward the ratio, 1s..60s; default 10s
     */
    public record Budget(@Nullable Double ratio, @Nullable Double minRetriesPerSecond, @Nullable Duration ttl) {
    }

    /**
     * The server-side amplification guard.
     *
     * @param enabled whether a failed inbound call whose downstream calls ran out of retries tells its
     *     caller not to retry
     */
    public record Guard(@DefaultValue("true") boolean enabled) {
    }

    /**
     * Per-attempt observations of the interceptor engine.
     *
     * @param enabled whether each attempt of the interceptor engine is an observation
     *     (grpc.client.attempt, a child of the call's, its trace context in the attempt's headers); takes
     *     effect only when an ObservationRegistry bean exists
     */
    public record Observation(@DefaultValue("true") boolean enabled) {
    }

    /**
     * The grpcRetry health contributor.
     *
     * @param statusWhenThrottled health status while any channel is throttling retries
     */
    public record Health(@DefaultValue("UP") String statusWhenThrottled) {
    }

    /**
     * Deadline propagation and cascade defence.
     *
     * @param defaultTimeout deadline given to calls that have none at all (neither on the stub nor
     *     inherited from an inbound call or request); a method's service-config timeout takes
     *     precedence; with spring.grpc.client.channel.&lt;name&gt;.default.deadline also set, the shorter one
     *     applies
     * @param reserve time taken off a deadline inherited from an inbound call (or an HTTP request with
     *     the timeout header), so that the downstream call gives up before the upstream does
     * @param minRemaining a call with less time than this left fails at once with DEADLINE_EXCEEDED and
     *     is never sent; 0 = off
     * @param http HTTP ingress: the caller's timeout taken from an inbound Spring MVC request header
     */
    public record Deadline(
            @Nullable Duration defaultTimeout,
            @DefaultValue("0s") Duration reserve,
            @DefaultValue("0s") Duration minRemaining,
            @DefaultValue Http http) {
    }

    /**
     * HTTP ingress of deadlines.
     *
     * @param header inbound HTTP header carrying the caller's timeout in milliseconds (empty = off),
     *     e.g. X-Request-Timeout-Ms
     * @param max clamp on a timeout taken from HTTP
     */
    public record Http(@DefaultValue("") String header, @DefaultValue("30s") Duration max) {
    }
}
