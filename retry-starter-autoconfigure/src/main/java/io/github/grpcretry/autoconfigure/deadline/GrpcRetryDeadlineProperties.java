package io.github.grpcretry.autoconfigure.deadline;

import io.github.grpcretry.policy.Durations;
import io.github.grpcretry.deadline.DeadlineSettings;
import java.time.Duration;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Deadline propagation and cascade defence ({@code grpc.retry.deadline.*}). Applied to every net.devh
 * client channel (outside the retry engine, so the whole retry sequence is bounded by the result).
 */
@ConfigurationProperties(prefix = GrpcRetryDeadlineProperties.PREFIX)
public class GrpcRetryDeadlineProperties implements InitializingBean {

    public static final String PREFIX = "grpc.retry.deadline";

    /**
     * Deadline given to calls that have none at all: neither an explicit deadline on the stub nor one
     * inherited from an inbound call or request. A method's service-config timeout takes precedence.
     * Unset (default) = calls without a deadline stay without one.
     */
    private Duration defaultTimeout;

    /**
     * Time taken off a deadline inherited from an inbound call (or an HTTP request with the timeout
     * header), so that the downstream call gives up before the upstream does. Applied per hop.
     */
    private Duration reserve = Duration.ZERO;

    /**
     * A call with less time than this left fails at once with DEADLINE_EXCEEDED and is never sent.
     * 0 (default) = off.
     */
    private Duration minRemaining = Duration.ZERO;

    /** HTTP ingress: the caller's timeout taken from an inbound Spring MVC request header. */
    private final Http http = new Http();

    public Duration getDefaultTimeout() {
        return defaultTimeout;
    }

    public void setDefaultTimeout(Duration defaultTimeout) {
        this.defaultTimeout = defaultTimeout;
    }

    public Duration getReserve() {
        return reserve;
    }

    public void setReserve(Duration reserve) {
        this.reserve = reserve;
    }

    public Duration getMinRemaining() {
        return minRemaining;
    }

    public void setMinRemaining(Duration minRemaining) {
        this.minRemaining = minRemaining;
    }

    public Http getHttp() {
        return http;
    }

    /** The validated rules as the plain-Java settings of the client interceptor. */
    public DeadlineSettings toSettings() {
        return new DeadlineSettings(defaultTimeout, reserve, minRemaining);
    }

    @Override
    public void afterPropertiesSet() {
        validate();
    }

    /** The longest duration accepted: {@link Durations#MAX} (what fits in a signed 64-bit count of nanoseconds). */
    static final Duration MAX_DURATION = Durations.MAX;

    /** Checks every value; the first invalid one stops start-up, naming its property path. */
    public void validate() {
        tooLong(".default-timeout", defaultTimeout);
        tooLong(".reserve", reserve);
        tooLong(".min-remaining", minRemaining);
        tooLong(".http.max", http.max);
        if (defaultTimeout != null && (defaultTimeout.isNegative() || defaultTimeout.isZero())) {
            throw new InvalidDeadlinePropertyException(PREFIX + ".default-timeout", show(defaultTimeout), "must be > 0",
                    "give a positive duration such as 5s, or remove the property for no default deadline");
        }
        if (reserve == null || reserve.isNegative()) {
            throw new InvalidDeadlinePropertyException(PREFIX + ".reserve", show(reserve), "must be >= 0",
                    "give a non-negative duration such as 20ms (0 = no reserve)");
        }
        if (minRemaining == null || minRemaining.isNegative()) {
            throw new InvalidDeadlinePropertyException(PREFIX + ".min-remaining", show(minRemaining), "must be >= 0",
                    "give a non-negative duration such as 50ms (0 = off)");
        }
        if (defaultTimeout != null && !minRemaining.isZero() && defaultTimeout.compareTo(minRemaining) <= 0) {
            throw new InvalidDeadlinePropertyException(PREFIX + ".default-timeout", show(defaultTimeout),
                    "must be greater than " + PREFIX + ".min-remaining (" + show(minRemaining)
                            + "), else every call without a deadline would be refused",
                    "raise default-timeout or lower min-remaining");
        }
        if (http.max == null || http.max.isNegative() || http.max.isZero()) {
            throw new InvalidDeadlinePropertyException(PREFIX + ".http.max", show(http.max), "must be > 0",
                    "give a positive duration such as 30s");
        }
        String header = http.header == null ? "" : http.header.trim();
        for (int i = 0; i < header.length(); i++) {
            if (!isTokenChar(header.charAt(i))) {
                throw new InvalidDeadlinePropertyException(PREFIX + ".http.header", http.header,
                        "must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~)",
                        "give a header name such as X-Request-Timeout-Ms, or leave it empty to turn HTTP ingress off");
            }
        }
    }

    /** Whether {@code d} does not fit in a signed 64-bit count of nanoseconds (no abs(): it overflows too). */
    private static boolean outOfNanos(Duration d) {
        return !Durations.fitsInNanos(d);
    }

    private static void tooLong(String property, Duration d) {
        if (d != null && outOfNanos(d)) {
            throw new InvalidDeadlinePropertyException(PREFIX + property, show(d),
                    "must be at most 292 years (the longest duration in nanoseconds)",
                    "give a duration such as 5s");
        }
    }

    /** A duration as a user writes it: "250ms", "-1s", "1.5ms". */
    static String show(Duration d) {
        if (d == null) {
            return "(none)";
        }
        if (outOfNanos(d)) {
            return d.getSeconds() + "s" + (d.getNano() == 0 ? "" : " and " + d.getNano() + "ns");
        }
        if (d.toNanos() % 1_000_000 != 0) {
            return d.toNanos() / 1e6 + "ms";
        }
        long ms = d.toMillis();
        return ms % 1000 == 0 && ms != 0 ? ms / 1000 + "s" : ms + "ms";
    }

    private static boolean isTokenChar(char c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
    }

    /** HTTP ingress settings. */
    public static class Http {

        /**
         * Inbound HTTP header carrying the caller's timeout in milliseconds (for example
         * X-Request-Timeout-Ms). When set, a Spring MVC request with the header is handled inside a gRPC
         * Context with that deadline, so gRPC calls made for it inherit it. Empty (default) = off.
         */
        private String header = "";

        /** Clamp on a timeout taken from the HTTP header. */
        private Duration max = Duration.ofSeconds(30);

        public String getHeader() {
            return header;
        }

        public void setHeader(String header) {
            this.header = header;
        }

        public Duration getMax() {
            return max;
        }

        public void setMax(Duration max) {
            this.max = max;
        }
    }
}
