package io.github.grpcretry.autoconfigure.deadline;

import io.github.grpcretry.deadline.DeadlineSettings;
import io.github.grpcretry.integration.DeadlinePropertyChecks;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import java.time.Duration;
import java.util.List;
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

    /** Checks every value; all broken rules stop start-up together, each named by its property path. */
    public void validate() {
        List<ConfigProblem> problems = DeadlinePropertyChecks.problems(defaultTimeout, reserve, minRemaining,
                http.max, http.header);
        if (!problems.isEmpty()) {
            throw new InvalidRetryConfigurationException(problems);
        }
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
