package io.github.grpcretry.spring;

import io.github.grpcretry.deadline.DeadlineClientInterceptor;
import io.github.grpcretry.spring.channel.ChannelSetup;
import io.github.grpcretry.spring.config.DeadlinePropertyChecks;
import java.time.Duration;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The {@code grpc.retry.*} property tree, the same keys on both Spring Boot lines (a team's YAML carries
 * over unchanged): immutable, bound through its constructor, one nested record per concern. Each line's
 * auto-configurations enable it; the values are checked by the beans that use them (the channels'
 * configurations, {@link Deadline#settings()}), every problem reported with its property path and the
 * origin of its value.
 *
 * <p>How a channel's configuration is put together (docs/design.md): Spring Boot 4.1's own
 * {@code spring.grpc.client.channel.<name>.service-config} (on that line), then {@code service-config-file},
 * then the typed {@code service-config.*} properties, each laid over the one below (an entry with the same
 * set of names overlays it field by field); then GLOBAL's settings, field by field, and GLOBAL's method
 * entries that the channel's own do not cover; the {@code ServiceConfigCustomizer} beans; the cap.
 *
 * @param enabled whether the gRPC retry starter is active
 * @param engine which engine does the retrying: "interceptor" (this project's engine, a client
 *     interceptor per channel; every decision observable) or "native" (grpc-java's own retry, configured
 *     from the same properties)
 * @param clients per-channel settings, keyed by the channel name (net.devh's {@code @GrpcClient} name on
 *     Spring Boot 3.5; on Spring Boot 4.1 Spring gRPC's channel name, where an in-process channel's name
 *     starts with "in-process:" and needs the bracket form grpc.retry.clients.[in-process:inventory]); the
 *     key GLOBAL holds defaults that every channel inherits field by field
 * @param guard the server-side amplification guard
 * @param deadline deadline propagation and cascade defence, applied to every client channel outside the
 *     retry engine (the whole retry sequence is bounded by the result)
 * @param health the grpcRetry health contributor
 * @param observation per-attempt observations (docs/observability.md)
 * @param ignoreUnknownProperties whether a key under grpc.retry (and, on Spring Boot 4.1, under the retry,
 *     hedging and retrythrottling parts of spring.grpc.client.channel.&lt;name&gt;.service-config) that binds
 *     to nothing is logged as one WARN instead of stopping start-up
 */
@ConfigurationProperties(GrpcRetryProperties.PREFIX)
public record GrpcRetryProperties(
        @DefaultValue("true") boolean enabled,
        @DefaultValue("interceptor") ChannelSetup.Engine engine,
        Map<String, GrpcRetryClientProperties> clients,
        @DefaultValue Guard guard,
        @DefaultValue Deadline deadline,
        @DefaultValue Health health,
        @DefaultValue Observation observation,
        @DefaultValue("false") boolean ignoreUnknownProperties) {

    /** Where the starter's properties are bound. */
    public static final String PREFIX = "grpc.retry";

    public GrpcRetryProperties {
        clients = clients == null ? Map.of() : clients;
    }

    /**
     * The server-side amplification guard.
     *
     * @param enabled whether the guard is on: a failed inbound call whose downstream calls ran out of
     *     retries tells its caller not to retry
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
     * @param statusWhenThrottled health status reported while any channel is throttling retries (e.g. UP,
     *     DEGRADED, OUT_OF_SERVICE)
     */
    public record Health(@DefaultValue("UP") String statusWhenThrottled) {
    }

    /**
     * Deadline propagation and cascade defence.
     *
     * @param defaultTimeout deadline given to calls that have none at all: neither an explicit deadline on
     *     the stub nor one inherited from an inbound call or request; a method's service-config timeout
     *     takes precedence; on Spring Boot 4.1, with spring.grpc.client.channel.&lt;name&gt;.default.deadline
     *     also set, the shorter one applies; unset (default) = calls without a deadline stay without one
     * @param reserve time taken off a deadline inherited from an inbound call (or an HTTP request with the
     *     timeout header), so that the downstream call gives up before the upstream does; applied per hop
     * @param minRemaining a call with less time than this left fails at once with DEADLINE_EXCEEDED and is
     *     never sent; 0 (default) = off
     * @param http HTTP ingress: the caller's timeout taken from an inbound Spring MVC request header
     */
    public record Deadline(
            @Nullable Duration defaultTimeout,
            @DefaultValue("0s") Duration reserve,
            @DefaultValue("0s") Duration minRemaining,
            @DefaultValue Http http) {

        /**
         * The rules as the client interceptor takes them, once every value is checked.
         *
         * @throws io.github.grpcretry.policy.InvalidRetryConfigurationException listing every invalid value
         */
        public DeadlineClientInterceptor.Settings settings() {
            DeadlinePropertyChecks.check(defaultTimeout, reserve, minRemaining, http.max(), http.header());
            return new DeadlineClientInterceptor.Settings(defaultTimeout, reserve, minRemaining);
        }
    }

    /**
     * HTTP ingress of deadlines.
     *
     * @param header inbound HTTP header carrying the caller's timeout in milliseconds (for example
     *     X-Request-Timeout-Ms); when set, a Spring MVC request with the header is handled inside a gRPC
     *     Context with that deadline, so gRPC calls made for it inherit it; empty (default) = off
     * @param max clamp on a timeout taken from the HTTP header
     */
    public record Http(@DefaultValue("") String header, @DefaultValue("30s") Duration max) {
    }
}
