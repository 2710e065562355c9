package io.github.grpcretry.autoconfigure;

import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.io.Resource;
import org.springframework.util.unit.DataSize;

/**
 * gRPC retry governance for net.devh gRPC clients ({@code grpc.retry.*}).
 *
 * <p>How a channel's configuration is put together:
 * <ol>
 *   <li><b>File, then typed properties.</b> {@code service-config-file} is read first; the typed
 *       {@code service-config.*} properties are laid over it. A typed method entry whose set of names
 *       equals that of a file entry overlays that entry field by field (retry and hedging sub-fields
 *       too); other typed entries are added. {@code retrythrottling} fields overlay field by field.</li>
 *   <li><b>GLOBAL.</b> The entry {@code grpc.retry.clients.GLOBAL} holds defaults. Every channel-wide
 *       setting a channel leaves unset ({@code budget.*}, {@code max-attempts-cap},
 *       {@code per-rpc-buffer-limit}, {@code retry-buffer-size}, {@code connect-timeout},
 *       {@code resilience4j-retry}, {@code service-config.retrythrottling.*}) is inherited from GLOBAL
 *       field by field; the built-in defaults (cap 5, 1MB, 16MB, min-retries-per-second 10, ttl 10s)
 *       apply after that. Method entries are matched channel first: a call is matched against the
 *       channel's own entries (exact method, then service, then channel default) and only then against
 *       GLOBAL's entries that the channel's entries do not cover.</li>
 *   <li><b>Customizers</b> ({@code ServiceConfigCustomizer} beans) change each channel's merged config
 *       in code.</li>
 *   <li><b>Cap.</b> A max-attempts above {@code max-attempts-cap} is capped and logged once at
 *       start-up as a WARN naming the property and the cap.</li>
 * </ol>
 * Every value is validated at start-up; all problems are reported together by a FailureAnalyzer
 * naming the full property path (or the JSON file and JSON path), the value, the rule and the fix.
 */
@ConfigurationProperties(prefix = "grpc.retry")
public class GrpcRetryProperties {

    /** Whether the gRPC retry starter is active. */
    private boolean enabled = true;

    /**
     * Which engine does the retrying: "interceptor" (a client interceptor per channel; every decision
     * observable) or "native" (grpc-java's own retry, configured from these properties).
     */
    private Engine engine = Engine.INTERCEPTOR;

    /**
     * Per-channel settings, keyed by the net.devh channel name ({@code @GrpcClient("<channel>")}). The
     * key GLOBAL holds defaults that every channel inherits field by field.
     */
    private Map<String, ClientProperties> clients = new LinkedHashMap<>();

    /**
     * Whether a key under grpc.retry that binds to nothing is logged as one WARN instead of stopping
     * start-up.
     */
    private boolean ignoreUnknownProperties;

    /** The server-side amplification guard. */
    private final Guard guard = new Guard();

    /** The health contributor. */
    private final Health health = new Health();

    /** Per-attempt observations (docs/observability.md). */
    private final Observation observation = new Observation();

    public Observation getObservation() {
        return observation;
    }

    /** Per-attempt observations of the interceptor engine. */
    public static class Observation {

        /**
         * Whether each attempt of the interceptor engine is an observation (grpc.client.attempt, a child
         * of the call's, its trace context in the attempt's headers). Takes effect only when an
         * ObservationRegistry bean exists.
         */
        private boolean enabled = true;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public boolean isIgnoreUnknownProperties() {
        return ignoreUnknownProperties;
    }

    public void setIgnoreUnknownProperties(boolean ignoreUnknownProperties) {
        this.ignoreUnknownProperties = ignoreUnknownProperties;
    }

    public Engine getEngine() {
        return engine;
    }

    public void setEngine(Engine engine) {
        this.engine = engine;
    }

    public Map<String, ClientProperties> getClients() {
        return clients;
    }

    public void setClients(Map<String, ClientProperties> clients) {
        this.clients = clients;
    }

    public Guard getGuard() {
        return guard;
    }

    public Health getHealth() {
        return health;
    }

    /** The retry engine. */
    public enum Engine {
        /** A client interceptor per channel does the retrying (default). */
        INTERCEPTOR,
        /** grpc-java's own retry (RetriableStream), configured through the channel builder. */
        NATIVE
    }

    /** The server-side amplification guard. */
    public static class Guard {

        /** Whether the server-side amplification guard is on. */
        private boolean enabled = true;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** The health contributor. */
    public static class Health {

        /** Health status reported while any channel is throttling retries (e.g. UP, DEGRADED, OUT_OF_SERVICE). */
        private String statusWhenThrottled = "UP";

        public String getStatusWhenThrottled() {
            return statusWhenThrottled;
        }

        public void setStatusWhenThrottled(String statusWhenThrottled) {
            this.statusWhenThrottled = statusWhenThrottled;
        }
    }

    /** The settings of one channel (or of GLOBAL). Unset fields are inherited from GLOBAL. */
    public static class ClientProperties {

        /**
         * The channel's service config: method entries and retry throttling, in the shape of Spring
         * Boot 4.1's spring.grpc.client.channel.<name>.service-config. Laid over service-config-file.
         */
        private ServiceConfigProperties serviceConfig = new ServiceConfigProperties();

        /**
         * A standard gRPC service config JSON (classpath: or file:), e.g. classpath:service-config.json.
         * The typed service-config properties are laid over it.
         */
        private Resource serviceConfigFile;

        /** A retry budget (beyond A6): retries as a share of calls over a sliding window. Off unless ratio is set. */
        private Budget budget = new Budget();

        /**
         * Channel-wide cap on attempts (grpc-java's maxRetryAttempts / maxHedgedAttempts). Larger
         * max-attempts are capped with a start-up warning. At least 1 (1 turns retries off). Default 5.
         */
        private Integer maxAttemptsCap;

        /** Buffered request bytes per call; past it the call is committed (no more retries). Default 1MB. */
        private DataSize perRpcBufferLimit;

        /** Channel-wide total of buffered request bytes for retries. Default 16MB. */
        private DataSize retryBufferSize;

        /** TCP connect timeout of the channel (Netty channels; ignored for in-process channels). */
        private Duration connectTimeout;

        /**
         * Name of a resilience4j Retry instance supplying the retry policy of this channel's methods
         * that have none of their own.
         */
        private String resilience4jRetry;

        public ServiceConfigProperties getServiceConfig() {
            return serviceConfig;
        }

        public void setServiceConfig(ServiceConfigProperties serviceConfig) {
            this.serviceConfig = serviceConfig;
        }

        public Resource getServiceConfigFile() {
            return serviceConfigFile;
        }

        public void setServiceConfigFile(Resource serviceConfigFile) {
            this.serviceConfigFile = serviceConfigFile;
        }

        public Budget getBudget() {
            return budget;
        }

        public void setBudget(Budget budget) {
            this.budget = budget;
        }

        public Integer getMaxAttemptsCap() {
            return maxAttemptsCap;
        }

        public void setMaxAttemptsCap(Integer maxAttemptsCap) {
            this.maxAttemptsCap = maxAttemptsCap;
        }

        public DataSize getPerRpcBufferLimit() {
            return perRpcBufferLimit;
        }

        public void setPerRpcBufferLimit(DataSize perRpcBufferLimit) {
            this.perRpcBufferLimit = perRpcBufferLimit;
        }

        public DataSize getRetryBufferSize() {
            return retryBufferSize;
        }

        public void setRetryBufferSize(DataSize retryBufferSize) {
            this.retryBufferSize = retryBufferSize;
        }

        public Duration getConnectTimeout() {
            return connectTimeout;
        }

        public void setConnectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
        }

        public String getResilience4jRetry() {
            return resilience4jRetry;
        }

        public void setResilience4jRetry(String resilience4jRetry) {
            this.resilience4jRetry = resilience4jRetry;
        }
    }

    /** A typed gRPC service config. */
    public static class ServiceConfigProperties {

        /** Method entries; each names the methods it applies to and their settings. */
        private List<MethodProperties> method = new ArrayList<>();

        /** gRFC A6 retry throttling: one token bucket per channel. */
        private RetryThrottlingProperties retrythrottling;

        public List<MethodProperties> getMethod() {
            return method;
        }

        public void setMethod(List<MethodProperties> method) {
            this.method = method;
        }

        public RetryThrottlingProperties getRetrythrottling() {
            return retrythrottling;
        }

        public void setRetrythrottling(RetryThrottlingProperties retrythrottling) {
            this.retrythrottling = retrythrottling;
        }
    }

    /** One method entry. */
    public static class MethodProperties {

        /**
         * The methods this entry applies to. Each name has a service (absent = every service) and a
         * method (absent = every method of the service). An entry without any name applies to every
         * method of the channel.
         */
        private List<NameProperties> name = new ArrayList<>();

        /** Whether calls wait for the channel to be ready instead of failing fast. */
        private Boolean waitForReady;

        /** Default deadline of calls to these methods. */
        private Duration timeout;

        /** Largest request message these methods may send. */
        private DataSize maxRequestMessage;

        /** Largest response message these methods may receive. */
        private DataSize maxResponseMessage;

        /** gRFC A6 retry policy. Not together with hedging. */
        private RetryProperties retry;

        /** gRFC A6 hedging policy. Not together with retry. */
        private HedgingProperties hedging;

        public List<NameProperties> getName() {
            return name;
        }

        public void setName(List<NameProperties> name) {
            this.name = name;
        }

        public Boolean getWaitForReady() {
            return waitForReady;
        }

        public void setWaitForReady(Boolean waitForReady) {
            this.waitForReady = waitForReady;
        }

        public Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }

        public DataSize getMaxRequestMessage() {
            return maxRequestMessage;
        }

        public void setMaxRequestMessage(DataSize maxRequestMessage) {
            this.maxRequestMessage = maxRequestMessage;
        }

        public DataSize getMaxResponseMessage() {
            return maxResponseMessage;
        }

        public void setMaxResponseMessage(DataSize maxResponseMessage) {
            this.maxResponseMessage = maxResponseMessage;
        }

        public RetryProperties getRetry() {
            return retry;
        }

        public void setRetry(RetryProperties retry) {
            this.retry = retry;
        }

        public HedgingProperties getHedging() {
            return hedging;
        }

        public void setHedging(HedgingProperties hedging) {
            this.hedging = hedging;
        }
    }

    /** One name matcher of a method entry. */
    public static class NameProperties {

        /** Fully-qualified service, e.g. shop.Inventory. Absent = every service (the channel default). */
        private String service;

        /** Method name, e.g. Reserve. Absent = every method of the service. */
        private String method;

        public String getService() {
            return service;
        }

        public void setService(String service) {
            this.service = service;
        }

        public String getMethod() {
            return method;
        }

        public void setMethod(String method) {
            this.method = method;
        }
    }

    /** gRFC A6 retry policy. */
    public static class RetryProperties {

        /** Attempts in all, the first included; at least 2. Capped by max-attempts-cap. */
        private Integer maxAttempts;

        /** Backoff before the first retry; > 0. */
        private Duration initialBackoff;

        /** Longest backoff; > 0. */
        private Duration maxBackoff;

        /** Factor by which the backoff grows per retry; > 0. */
        private Double backoffMultiplier;

        /**
         * Status codes that are retried; not empty, never OK. Names in any case (UNAVAILABLE, unavailable)
         * or numbers (14).
         */
        private List<Status.Code> retryableStatusCodes;

        /**
         * Optional time limit for receiving the response of one attempt; > 0. Applied by the interceptor
         * engine only: grpc-java 1.85 (engine native) never applies it, which is logged at start-up.
         */
        private Duration perAttemptReceiveTimeout;

        public Integer getMaxAttempts() {
            return maxAttempts;
        }

        public void setMaxAttempts(Integer maxAttempts) {
            this.maxAttempts = maxAttempts;
        }

        public Duration getInitialBackoff() {
            return initialBackoff;
        }

        public void setInitialBackoff(Duration initialBackoff) {
            this.initialBackoff = initialBackoff;
        }

        public Duration getMaxBackoff() {
            return maxBackoff;
        }

        public void setMaxBackoff(Duration maxBackoff) {
            this.maxBackoff = maxBackoff;
        }

        public Double getBackoffMultiplier() {
            return backoffMultiplier;
        }

        public void setBackoffMultiplier(Double backoffMultiplier) {
            this.backoffMultiplier = backoffMultiplier;
        }

        public List<Status.Code> getRetryableStatusCodes() {
            return retryableStatusCodes;
        }

        public void setRetryableStatusCodes(List<Status.Code> retryableStatusCodes) {
            this.retryableStatusCodes = retryableStatusCodes;
        }

        public Duration getPerAttemptReceiveTimeout() {
            return perAttemptReceiveTimeout;
        }

        public void setPerAttemptReceiveTimeout(Duration perAttemptReceiveTimeout) {
            this.perAttemptReceiveTimeout = perAttemptReceiveTimeout;
        }
    }

    /** gRFC A6 hedging policy. */
    public static class HedgingProperties {

        /** Attempts in all, the first included; at least 2. Capped by max-attempts-cap. */
        private Integer maxAttempts;

        /** Delay between hedged attempts; >= 0 (0 sends them all at once). Default 0. */
        private Duration delay;

        /** Status codes that do not stop the other hedged attempts: names in any case or numbers. */
        private List<Status.Code> nonFatalStatusCodes;

        public Integer getMaxAttempts() {
            return maxAttempts;
        }

        public void setMaxAttempts(Integer maxAttempts) {
            this.maxAttempts = maxAttempts;
        }

        public Duration getDelay() {
            return delay;
        }

        public void setDelay(Duration delay) {
            this.delay = delay;
        }

        public List<Status.Code> getNonFatalStatusCodes() {
            return nonFatalStatusCodes;
        }

        public void setNonFatalStatusCodes(List<Status.Code> nonFatalStatusCodes) {
            this.nonFatalStatusCodes = nonFatalStatusCodes;
        }
    }

    /** gRFC A6 retry throttling. */
    public static class RetryThrottlingProperties {

        /** Size of the channel's token bucket; in (0, 1000]. */
        private Double maxTokens;

        /** Tokens a successful call gives back; > 0, three decimals kept. */
        private Double tokenRatio;

        public Double getMaxTokens() {
            return maxTokens;
        }

        public void setMaxTokens(Double maxTokens) {
            this.maxTokens = maxTokens;
        }

        public Double getTokenRatio() {
            return tokenRatio;
        }

        public void setTokenRatio(Double tokenRatio) {
            this.tokenRatio = tokenRatio;
        }
    }

    /** A retry budget. */
    public static class Budget {

        /** Retries allowed as a share of calls, in (0, 1] (0.1 = 10 %). Unset = no budget. */
        private Double ratio;

        /** Floor of retries per second that lets low-traffic clients retry; >= 0. Default 10. */
        private Double minRetriesPerSecond;

        /** Window over which calls count toward the ratio; 1s to 60s. Default 10s. */
        private Duration ttl;

        public Double getRatio() {
            return ratio;
        }

        public void setRatio(Double ratio) {
            this.ratio = ratio;
        }

        public Double getMinRetriesPerSecond() {
            return minRetriesPerSecond;
        }

        public void setMinRetriesPerSecond(Double minRetriesPerSecond) {
            this.minRetriesPerSecond = minRetriesPerSecond;
        }

        public Duration getTtl() {
            return ttl;
        }

        public void setTtl(Duration ttl) {
            this.ttl = ttl;
        }
    }
}
