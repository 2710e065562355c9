package io.github.grpcretry.spring.report;

import io.github.grpcretry.attempt.AdaptiveHedgingRegistry;
import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.config.RetryConfigResolver;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.policy.AdaptiveHedgingPolicy;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.HedgingPolicy;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.spring.channel.ChannelSetup;
import io.github.grpcretry.spring.channel.StreamResumptions;
import io.github.grpcretry.spring.reload.PolicySources;
import io.github.grpcretry.spring.reload.ReloadableChannels;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.ConnectivityState;
import io.grpc.Status;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * What a health contributor and a read-only endpoint show of each channel, the same on every Spring
 * Boot line: the effective configuration ({@link ChannelRetryConfigs}), the limiters
 * ({@link RetryLimiterRegistry}), the counts since start ({@link RetryStatistics}) and the
 * connectivity states ({@link ChannelStateSource}), each read when asked (a supplier may give null:
 * that part is left out); with a {@link ReloadableChannels} configuration also each channel's last
 * run-time reload ({@code lastReload}). Output is plain maps and lists in a stable key order, for a JSON writer;
 * durations as users write them ({@code 100ms}, {@code 10s}), sizes too ({@code 1MB}, with the bytes beside
 * under {@code <key>Bytes}), status codes by name. With the native engine
 * grpc-java keeps its own token bucket, so tokens and suppressed retries are reported as not observable.
 */
public final class RetryReport {

    /** What stands for a value grpc-java does not expose. */
    public static final String NOT_OBSERVABLE_NATIVE = "not observable with the native engine";

    /** What stands for the stream resumptions of a channel the native engine runs. */
    public static final String NOT_APPLIED_NATIVE = "not applied with the native engine (it has no stream resumption)";

    private final ChannelSetup.Engine engine;
    private final Supplier<@Nullable ChannelRetryConfigs> configs;
    private final Supplier<@Nullable RetryLimiterRegistry> limiters;
    private final Supplier<@Nullable RetryStatistics> statistics;
    private final Supplier<@Nullable ChannelStateSource> states;
    private final Supplier<@Nullable PolicySources> policies;
    private final Supplier<@Nullable AdaptiveHedgingRegistry> adaptiveHedging;
    private final Supplier<@Nullable StreamResumptions> resumptions;

    public RetryReport(ChannelSetup.Engine engine, Supplier<@Nullable ChannelRetryConfigs> configs,
            Supplier<@Nullable RetryLimiterRegistry> limiters, Supplier<@Nullable RetryStatistics> statistics,
            Supplier<@Nullable ChannelStateSource> states) {
        this(engine, configs, limiters, statistics, states, () -> null);
    }

    /**
     * As above, each channel's endpoint entry also showing where its policy comes from and what became of
     * a service config its name resolver supplied ({@link PolicySources#report}).
     */
    public RetryReport(ChannelSetup.Engine engine, Supplier<@Nullable ChannelRetryConfigs> configs,
            Supplier<@Nullable RetryLimiterRegistry> limiters, Supplier<@Nullable RetryStatistics> statistics,
            Supplier<@Nullable ChannelStateSource> states, Supplier<@Nullable PolicySources> policies) {
        this(engine, configs, limiters, statistics, states, policies, () -> null);
    }

    /** As above, each channel's endpoint entry also showing its hedged methods' current adaptive delays. */
    public RetryReport(ChannelSetup.Engine engine, Supplier<@Nullable ChannelRetryConfigs> configs,
            Supplier<@Nullable RetryLimiterRegistry> limiters, Supplier<@Nullable RetryStatistics> statistics,
            Supplier<@Nullable ChannelStateSource> states, Supplier<@Nullable PolicySources> policies,
            Supplier<@Nullable AdaptiveHedgingRegistry> adaptiveHedging) {
        this(engine, configs, limiters, statistics, states, policies, adaptiveHedging, () -> null);
    }

    /**
     * As above, each channel's endpoint entry also showing the methods whose server streams its engine resumes and
     * the class of each one's {@code StreamResumption} ({@code streamResumptions}).
     */
    public RetryReport(ChannelSetup.Engine engine, Supplier<@Nullable ChannelRetryConfigs> configs,
            Supplier<@Nullable RetryLimiterRegistry> limiters, Supplier<@Nullable RetryStatistics> statistics,
            Supplier<@Nullable ChannelStateSource> states, Supplier<@Nullable PolicySources> policies,
            Supplier<@Nullable AdaptiveHedgingRegistry> adaptiveHedging,
            Supplier<@Nullable StreamResumptions> resumptions) {
        this.resumptions = Objects.requireNonNull(resumptions, "resumptions");
        this.adaptiveHedging = Objects.requireNonNull(adaptiveHedging, "adaptiveHedging");
        this.policies = Objects.requireNonNull(policies, "policies");
        this.engine = Objects.requireNonNull(engine, "engine");
        this.configs = Objects.requireNonNull(configs, "configs");
        this.limiters = Objects.requireNonNull(limiters, "limiters");
        this.statistics = Objects.requireNonNull(statistics, "statistics");
        this.states = Objects.requireNonNull(states, "states");
    }

    /** The engine's name as the property spells it: {@code interceptor} or {@code native}. */
    public String engine() {
        return engine.propertyValue();
    }

    private boolean isNative() {
        return engine == ChannelSetup.Engine.NATIVE;
    }

    /** Channels that are configured, have limiters, saw calls or were built, sorted. */
    public Set<String> channels() {
        Set<String> names = new TreeSet<>();
        ChannelRetryConfigs c = configs.get();
        if (c != null) {
            names.addAll(c.configuredChannels());
        }
        RetryLimiterRegistry l = limiters.get();
        if (l != null) {
            names.addAll(l.channels());
        }
        RetryStatistics s = statistics.get();
        if (s != null) {
            names.addAll(s.channels());
        }
        names.addAll(connectivityStates().keySet());
        return names;
    }

    /** The channels' connectivity states (empty when there is no source or it fails). */
    public Map<String, ConnectivityState> connectivityStates() {
        ChannelStateSource s = states.get();
        if (s == null) {
            return Map.of();
        }
        try {
            Map<String, ConnectivityState> m = s.states();
            return m == null ? Map.of() : m;
        } catch (RuntimeException e) {
            return Map.of();
        }
    }

    /** Whether the channel's throttle refuses retries now (always false for the native engine: not observable). */
    public boolean isThrottling(String channel) {
        if (isNative()) {
            return false;
        }
        RetryLimiterRegistry l = limiters.get();
        return l != null && l.throttle(channel).map(RetryThrottle::isThrottling).orElse(false);
    }

    /**
     * The health details of one channel: engine, tokens, max tokens, threshold, throttling, budget balance,
     * state, and where its policy comes from ({@code policySources}).
     */
    public Map<String, Object> health(String channel, Map<String, ConnectivityState> states) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("engine", engine());
        RetryLimiterRegistry l = limiters.get();
        RetryThrottle throttle = l == null || isNative() ? null : l.throttle(channel).orElse(null);
        if (throttle != null) {
            out.put("tokens", throttle.tokens());
            out.put("maxTokens", throttle.maxTokens());
            out.put("threshold", throttle.threshold());
            out.put("throttling", throttle.isThrottling());
        } else {
            RetryThrottlingPolicy policy = throttlingPolicy(channel);
            if (policy != null) {
                out.put("tokens", isNative() ? NOT_OBSERVABLE_NATIVE : "throttle not created yet");
                out.put("maxTokens", policy.maxTokensMilli() / 1000.0);
                out.put("threshold", (policy.maxTokensMilli() / 2) / 1000.0);
            }
            out.put("throttling", isNative() ? NOT_OBSERVABLE_NATIVE : false);
        }
        RetryBudget budget = l == null ? null : l.budget(channel).orElse(null);
        if (budget != null) {
            out.put("budgetBalance", budget.balance());
        }
        ConnectivityState state = states.get(channel);
        if (state != null) {
            out.put("connectivityState", state.name());
        }
        PolicySources p = policies.get();
        if (p != null) {
            out.put("policySources", p.report(channel).get("sources"));
        }
        putLastReload(out, channel);
        return out;
    }

    /** {@code lastReload} (time, outcome, message) when the configuration is reloadable and a reload concerned the channel. */
    private void putLastReload(Map<String, Object> out, String channel) {
        if (configs.get() instanceof ReloadableChannels r) {
            ReloadableChannels.LastReload last = r.lastReload(channel);
            if (last != null) {
                out.put("lastReload", last.toMap());
            }
        }
    }

    /**
     * The health status code to report while a channel throttles: upper case, {@code UP} when not set
     * ({@code grpc.retry.health.status-when-throttled}).
     */
    public static String statusWhenThrottled(@Nullable String code) {
        return code == null || code.isBlank() ? "UP" : code.trim().toUpperCase(Locale.ROOT);
    }

    /**
     * What the health contributor shows, read once.
     *
     * @param channels every channel's {@link #health(String, Map) details}, sorted by name
     * @param throttling the channels whose throttle refuses retries now (empty: the status is UP)
     */
    public record HealthDetails(Map<String, Object> channels, List<String> throttling) {
        public HealthDetails {
            channels = Collections.unmodifiableMap(new LinkedHashMap<>(channels));
            throttling = List.copyOf(throttling);
        }

        /**
         * The status code to report: {@code UP}, or {@code statusWhenThrottled} (as
         * {@link RetryReport#statusWhenThrottled(String)} made it) while a channel throttles.
         */
        public String status(String statusWhenThrottled) {
            return throttling.isEmpty() ? "UP" : statusWhenThrottled;
        }

        /** The details to report: {@code throttling} (only while a channel throttles), then {@code channels}. */
        public Map<String, Object> details() {
            Map<String, Object> details = new LinkedHashMap<>();
            if (!throttling.isEmpty()) {
                details.put("throttling", throttling);
            }
            details.put("channels", channels);
            return details;
        }
    }

    /** The health contributor's details of every channel and the channels that throttle now. */
    public HealthDetails health() {
        Map<String, ConnectivityState> states = connectivityStates();
        Map<String, Object> channels = new LinkedHashMap<>();
        List<String> throttling = new ArrayList<>();
        for (String channel : channels()) {
            channels.put(channel, health(channel, states));
            if (isThrottling(channel)) {
                throttling.add(channel);
            }
        }
        return new HealthDetails(channels, throttling);
    }

    /** The read-only endpoint's answer: the engine and every channel's {@link #channel(String, Map) entry}. */
    public Map<String, Object> endpoint() {
        Map<String, ConnectivityState> states = connectivityStates();
        Map<String, Object> channels = new LinkedHashMap<>();
        for (String channel : channels()) {
            channels.put(channel, channel(channel, states));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("engine", engine());
        out.put("channels", channels);
        return out;
    }

    /** The read-only endpoint's answer for one channel; null when it is neither configured nor known (a 404). */
    public @Nullable Map<String, Object> endpoint(String channel) {
        if (!channels().contains(channel)) {
            return null;
        }
        return channel(channel, connectivityStates());
    }

    /**
     * The endpoint's entry of one channel: engine, effective config, where its policy comes from, the stream
     * resumptions its engine applies, limiter state, counts since start, state.
     */
    public Map<String, Object> channel(String channel, Map<String, ConnectivityState> states) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("engine", engine());
        ChannelRetryConfigs c = configs.get();
        if (c != null) {
            out.put("config", config(c.forChannel(channel)));
        }
        PolicySources p = policies.get();
        if (p != null) {
            out.put("policy", p.report(channel));
        }
        putStreamResumptions(out, c == null ? null : c.forChannel(channel));
        out.put("limiter", limiter(channel));
        AdaptiveHedgingRegistry adaptive = adaptiveHedging.get();
        List<AdaptiveHedgingRegistry.MethodDelay> delays = adaptive == null ? List.of() : adaptive.delays(channel);
        if (!delays.isEmpty()) {
            Map<String, Object> byMethod = new TreeMap<>();
            for (AdaptiveHedgingRegistry.MethodDelay d : delays) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("delay", measured(d.delay()));
                m.put("adapted", d.adapted());
                m.put("windowCalls", d.windowCalls());
                m.put("windowHedges", d.windowHedges());
                byMethod.put(d.fullMethodName(), m);
            }
            out.put("hedgingDelays", byMethod);
        }
        out.put("counts", counts(channel));
        ConnectivityState state = states.get(channel);
        if (state != null) {
            out.put("connectivityState", state.name());
        }
        putLastReload(out, channel);
        return out;
    }

    /**
     * {@code streamResumptions}, when the application has any: each method the channel's engine resumes and the
     * class of its resumption; what stands for them when the native engine or {@code streams.max-resumes: 0} turns
     * them off.
     */
    private void putStreamResumptions(Map<String, Object> out, @Nullable ChannelRetryConfig config) {
        StreamResumptions r = resumptions.get();
        if (r == null || r.isEmpty()) {
            return;
        }
        if (isNative()) {
            out.put("streamResumptions", NOT_APPLIED_NATIVE);
        } else if (config != null && config.streams().maxResumes() == 0) {
            out.put("streamResumptions", "off: streams.max-resumes is 0");
        } else {
            out.put("streamResumptions", r.classesByMethod());
        }
    }

    private @Nullable RetryThrottlingPolicy throttlingPolicy(String channel) {
        ChannelRetryConfigs c = configs.get();
        return c == null ? null : c.forChannel(channel).serviceConfig().retryThrottling();
    }

    /** A channel's effective configuration as plain maps. */
    public static Map<String, Object> config(ChannelRetryConfig config) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("maxAttemptsCap", config.maxAttemptsCap());
        putSize(out, "perRpcBufferLimit", config.perRpcBufferLimit());
        putSize(out, "retryBufferSize", config.retryBufferSize());
        putIfSet(out, "connectTimeout", duration(config.connectTimeout()));
        putIfSet(out, "resilience4jRetry", config.resilience4jRetry());
        out.put("retryInfo", config.retryInfo());
        out.put("retryInfoMaxDelay", RetryConfigResolver.durationText(config.retryInfoMaxDelay()));
        out.put("avoidTriedBackends", config.avoidTriedBackends());
        out.put("backendPicks", config.backendPicks());
        Map<String, Object> streams = new LinkedHashMap<>();
        putIfSet(streams, "idleTimeout", duration(config.streams().idleTimeout()));
        streams.put("maxResumes", config.streams().maxResumes());
        out.put("streams", streams);
        AdaptiveHedgingPolicy a = config.adaptiveHedging();
        if (a != null) {
            Map<String, Object> adaptive = new LinkedHashMap<>();
            adaptive.put("maxExtraLoad", a.maxExtraLoad());
            adaptive.put("minDelay", RetryConfigResolver.durationText(a.minDelay()));
            putIfSet(adaptive, "maxDelay", duration(a.maxDelay()));
            adaptive.put("minSamples", a.minSamples());
            adaptive.put("window", RetryConfigResolver.durationText(a.window()));
            out.put("adaptiveHedging", adaptive);
        }
        RetryBudgetPolicy b = config.budget();
        if (b != null) {
            Map<String, Object> budget = new LinkedHashMap<>();
            budget.put("ratio", b.ratio());
            budget.put("minRetriesPerSecond", b.minRetriesPerSecond());
            budget.put("ttl", RetryConfigResolver.durationText(b.ttl()));
            out.put("budget", budget);
        }
        RetryThrottlingPolicy t = config.serviceConfig().retryThrottling();
        if (t != null) {
            Map<String, Object> throttling = new LinkedHashMap<>();
            throttling.put("maxTokens", t.maxTokensMilli() / 1000.0);
            throttling.put("tokenRatio", t.tokenRatioMilli() / 1000.0);
            out.put("retryThrottling", throttling);
        }
        List<Object> methods = new ArrayList<>();
        for (MethodConfig mc : config.serviceConfig().methodConfigs()) {
            methods.add(method(mc));
        }
        out.put("methods", methods);
        return out;
    }

    private static Map<String, Object> method(MethodConfig mc) {
        Map<String, Object> out = new LinkedHashMap<>();
        List<String> names = new ArrayList<>();
        for (MethodName n : mc.names()) {
            names.add(n.toString());
        }
        out.put("names", names);
        putIfSet(out, "waitForReady", mc.waitForReady());
        putIfSet(out, "timeout", duration(mc.timeout()));
        if (mc.maxRequestMessageBytes() != null) {
            putSize(out, "maxRequestMessage", mc.maxRequestMessageBytes());
        }
        if (mc.maxResponseMessageBytes() != null) {
            putSize(out, "maxResponseMessage", mc.maxResponseMessageBytes());
        }
        RetryPolicy r = mc.retryPolicy();
        if (r != null) {
            out.put("retry", RetryConfigResolver.report(r));
        }
        HedgingPolicy h = mc.hedgingPolicy();
        if (h != null) {
            Map<String, Object> hedging = new LinkedHashMap<>();
            hedging.put("maxAttempts", h.maxAttempts());
            hedging.put("delay", RetryConfigResolver.durationText(h.hedgingDelay()));
            hedging.put("nonFatalStatusCodes", codes(h.nonFatalStatusCodes()));
            out.put("hedging", hedging);
        }
        return out;
    }

    private Map<String, Object> limiter(String channel) {
        Map<String, Object> out = new LinkedHashMap<>();
        RetryLimiterRegistry l = limiters.get();
        RetryThrottle throttle = l == null || isNative() ? null : l.throttle(channel).orElse(null);
        if (throttle != null) {
            Map<String, Object> t = new LinkedHashMap<>();
            t.put("tokens", throttle.tokens());
            t.put("maxTokens", throttle.maxTokens());
            t.put("threshold", throttle.threshold());
            t.put("tokenRatio", throttle.tokenRatio());
            t.put("throttling", throttle.isThrottling());
            out.put("throttle", t);
        } else if (isNative() && throttlingPolicy(channel) != null) {
            out.put("throttle", NOT_OBSERVABLE_NATIVE);
        }
        RetryBudget budget = l == null ? null : l.budget(channel).orElse(null);
        if (budget != null) {
            Map<String, Object> b = new LinkedHashMap<>();
            b.put("balance", budget.balance());
            b.put("callsInWindow", budget.callsInWindow());
            b.put("retriesInWindow", budget.retriesInWindow());
            out.put("budget", b);
        }
        return out;
    }

    private Map<String, Object> counts(String channel) {
        RetryStatistics s = statistics.get();
        Map<String, Object> out = new LinkedHashMap<>();
        if (s == null) {
            return out;
        }
        RetryStatistics.ChannelCounts counts = s.counts(channel);
        out.put("calls", counts.calls());
        out.put("failedCalls", counts.failedCalls());
        out.put("attempts", counts.attempts());
        out.put("retries", counts.retries());
        out.put("hedges", counts.hedges());
        out.put("suppressed", isNative() ? NOT_OBSERVABLE_NATIVE : counts.suppressed());
        return out;
    }

    private static void putIfSet(Map<String, Object> out, String key, @Nullable Object value) {
        if (value != null) {
            out.put(key, value);
        }
    }

    /**
     * A size as users write it ({@code 1MB}, {@code 64KB}, {@code 1000B}: the largest binary unit that
     * holds it exactly, as Spring's {@code DataSize} reads it), with the number of bytes beside it under
     * {@code <key>Bytes} for tools.
     */
    private static void putSize(Map<String, Object> out, String key, long bytes) {
        String[] units = {"TB", "GB", "MB", "KB"};
        String text = bytes + "B";
        for (int i = 0; i < units.length; i++) {
            long unit = 1L << (10 * (units.length - i));
            if (bytes != 0 && bytes % unit == 0) {
                text = bytes / unit + units[i];
                break;
            }
        }
        out.put(key, text);
        out.put(key + "Bytes", bytes);
    }

    private static @Nullable String duration(@Nullable Duration d) {
        return d == null ? null : RetryConfigResolver.durationText(d);
    }

    private static List<String> codes(Collection<Status.Code> codes) {
        List<String> out = new ArrayList<>(codes.size());
        for (Status.Code c : codes) {
            out.add(c.name());
        }
        return out;
    }

    /**
     * A measured duration as people read it: three significant digits at most in the largest unit that
     * holds it ({@code 45.1ms} for 45,056 microseconds, {@code 1.5s}, {@code 850us}), where a configured
     * one keeps its exact form ({@link RetryConfigResolver#durationText}).
     */
    static String measured(Duration d) {
        long nanos = RetryConfigResolver.fitsInNanos(d) ? d.toNanos() : d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        if (nanos == 0) {
            return "0s";
        }
        String[] units = {"s", "ms", "us"};
        long[] scales = {1_000_000_000L, 1_000_000L, 1_000L};
        int i = 0;
        while (i < units.length - 1 && Math.abs(nanos) < scales[i]) {
            i++;
        }
        BigDecimal value = BigDecimal.valueOf(nanos).divide(BigDecimal.valueOf(scales[i]));
        BigDecimal rounded = value.abs().compareTo(BigDecimal.valueOf(1000)) >= 0 ? value.setScale(0, RoundingMode.HALF_UP)
                : value.round(new MathContext(3, RoundingMode.HALF_UP));
        return rounded.stripTrailingZeros().toPlainString() + units[i];
    }
}
