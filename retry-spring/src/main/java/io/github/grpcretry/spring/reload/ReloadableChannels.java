package io.github.grpcretry.spring.reload;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.config.RetryConfigResolver;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.spring.channel.ChannelSetup;
import io.github.grpcretry.spring.config.UnknownProperties;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.MethodDescriptor;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The effective configuration of every channel, changeable at run time (docs/reload.md): both Spring Boot
 * lines hand this to whatever reads a channel's configuration, put {@link #interceptor(String, StackFactory)}
 * on every channel, and call {@link #reload} when the environment under {@code grpc.retry} (or, on the
 * Spring Boot 4.1 line, the parts of {@code spring.grpc.client.channel.<name>.service-config} the starter
 * takes over) changed.
 *
 * <p>A reload resolves the whole configuration again, exactly as at start-up (the caller's supplier binds
 * and validates), and then, channel by channel:
 * <ul>
 *   <li>a configuration that fails is <b>rejected</b> whole: every channel keeps what it runs;</li>
 *   <li>a change a built channel cannot take (its connect timeout, attempt cap, buffer limits, the method
 *       timeouts, wait-for-ready and message limits grpc-java holds in the channel's default service config,
 *       and on the native engine everything) is reported as <b>restart required</b> with its keys, and
 *       nothing of it is applied to that channel;</li>
 *   <li>any other change is <b>applied</b>: the channel's interceptors are made anew from the new
 *       configuration and swapped in one step. A call reads its channel's interceptors once, when it starts,
 *       so calls that start after the swap run the new policy and calls in flight finish with theirs. The
 *       throttle and the budget are kept, with their tokens and window, when their own parameters did not
 *       change, and start afresh when they did; the engine's timers and buffer pool are kept
 *       ({@link RetryingClientInterceptor.Builder#reusing}).</li>
 * </ul>
 * A channel the changed keys concern whose resolved configuration is the one it runs (a change undone, a
 * rejected value put back) is <b>unchanged</b>; a refresh that failed before its configuration could be read
 * (such as a syntax error in an imported file, {@link #failed}) is <b>failed</b> on every channel. Every
 * channel a reload concerns keeps its {@link #lastReload last outcome} for the endpoint and health.
 *
 * <p>An outcome names the keys that caused it: with the {@linkplain #reload(Supplier, Collection, Map) values}
 * of the configuration keys, the keys whose values differ from those the channel's running configuration was
 * made from (a change held for a restart stays named until it is undone or applied); without them, the
 * changed keys of this refresh.
 */
public final class ReloadableChannels implements ChannelRetryConfigs {

    /** What became of a reload on one channel (the {@code outcome} tag of the reload counter). */
    public enum Outcome {
        APPLIED, UNCHANGED, REJECTED, RESTART_REQUIRED, FAILED;

        /**
         * As the meter tag and the endpoint spell it: {@code applied}, {@code unchanged}, {@code rejected},
         * {@code restart_required}, {@code failed}.
         */
        public String tag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The last reload that concerned a channel. */
    public record LastReload(Instant time, Outcome outcome, String message) {

        public LastReload {
            Objects.requireNonNull(time, "time");
            Objects.requireNonNull(outcome, "outcome");
            Objects.requireNonNull(message, "message");
        }

        /** As the endpoint and health show it: {@code time} (ISO-8601), {@code outcome}, {@code message}. */
        public Map<String, Object> toMap() {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("time", time.toString());
            out.put("outcome", outcome.tag());
            out.put("message", message);
            return out;
        }
    }

    /**
     * What one reload did: the outcome per channel it concerned, and, when it was rejected, the problems
     * (each with its property path) or the failure that rejected it.
     */
    public record Result(Map<String, LastReload> channels, List<ConfigProblem> problems, @Nullable RuntimeException failure) {

        public Result {
            channels = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(channels));
            problems = List.copyOf(problems);
        }
    }

    /**
     * Makes a channel's interceptors, outermost first, from its configuration (the deadline rules, the
     * guard, the engine: each line knows its own). Called once when the channel's first call starts and
     * again after each applied reload.
     */
    @FunctionalInterface
    public interface StackFactory {

        /**
         * @param previousEngine the interceptor engine the channel ran before this reload (hand it to
         *     {@link ChannelSetup#engineInterceptor}, which takes over its timers and buffer pool); absent the
         *     first time and with the native engine
         */
        List<ClientInterceptor> stack(ChannelRetryConfig config, @Nullable RetryingClientInterceptor previousEngine);
    }

    private static final String CLIENTS = RetryConfigResolver.CLIENTS_PREFIX;
    private static final String BOOT_CHANNELS = "spring.grpc.client.channel.";

    private final ChannelSetup.Engine engine;
    private final @Nullable RetryLimiterRegistry limiters;
    private volatile ChannelRetryConfigs current;
    private final Map<String, Slot> slots = new ConcurrentHashMap<>();
    private final Map<String, LastReload> lastReloads = new ConcurrentHashMap<>();
    /** The values of the configuration keys {@link #current} was resolved from; absent while not given. */
    private volatile @Nullable Map<String, String> currentValues;

    /**
     * @param initial the configuration validated at start-up
     * @param limiters where the interceptor engine's throttles and budgets live; absent = none
     */
    public ReloadableChannels(ChannelRetryConfigs initial, ChannelSetup.Engine engine, @Nullable RetryLimiterRegistry limiters) {
        this.current = Objects.requireNonNull(initial, "initial");
        this.engine = Objects.requireNonNull(engine, "engine");
        this.limiters = limiters;
    }

    /**
     * The configuration the channel runs (a built channel's own, else the current one); with the interceptor
     * engine it includes the policies of the service config the channel's name resolver supplied last
     * ({@code resolverServiceConfig}).
     */
    @Override
    public ChannelRetryConfig forChannel(String channel) {
        Slot slot = slots.get(channel);
        return slot != null ? slot.config : current.forChannel(channel);
    }

    /**
     * The channel's own configuration (grpc.retry, and on the Spring Boot 4.1 line Boot's service-config),
     * without the policies of a service config its name resolver supplied.
     */
    public ChannelRetryConfig ownConfig(String channel) {
        Slot slot = slots.get(channel);
        return slot != null ? slot.own : current.forChannel(channel);
    }

    /**
     * The retry parts of the service config {@code channel}'s name resolver supplied last (interceptor engine;
     * docs/spring-boot-4.md): from now on the channel runs them for the method names its own configuration does
     * not name, and their retry throttling when it has none ({@link PolicySources#layered}). A change is applied
     * as a reload's is: calls that start afterwards run the new policies, calls in flight finish with theirs.
     *
     * @param supplied the resolver's retry and hedging policies and retry throttling; absent = none (its latest
     *     answer had no service config, or one without policies)
     */
    synchronized void resolverServiceConfig(String channel, @Nullable ServiceConfig supplied) {
        Slot slot = slot(channel);
        slot.resolver = supplied;
        ChannelRetryConfig next = PolicySources.layered(slot.own, supplied);
        if (!next.equals(slot.config)) {
            apply(slot, slot.own, next);
        }
    }

    /**
     * The calls of {@code channel} wait for the first answer of its name resolver from now on (until
     * {@link #resolverAnswered}), as grpc-java's own calls do, so that the first calls already run the
     * policies it supplies. Only the first resolver of a channel name is waited for.
     */
    void awaitResolver(String channel) {
        if (engine == ChannelSetup.Engine.INTERCEPTOR) {
            slot(channel).awaitResolver();
        }
    }

    /** {@code channel}'s name resolver answered (a result, an error, or it was shut down): its calls go on. */
    void resolverAnswered(String channel) {
        Slot slot = slots.get(channel);
        if (slot != null) {
            slot.resolverAnswered();
        }
    }

    @Override
    public Set<String> configuredChannels() {
        return current.configuredChannels();
    }

    /**
     * Marks {@code channel} as built (its builder was configured from the returned configuration): from now
     * on a change to what the builder took needs a restart.
     */
    public ChannelRetryConfig built(String channel) {
        Slot slot = slot(channel);
        slot.built = true;
        return slot.config;
    }

    /**
     * The one interceptor of {@code channel} that runs its current interceptors (made by {@code factory} on
     * the channel's first call and again after each applied reload). The same object for every call to the
     * same name.
     */
    public ClientInterceptor interceptor(String channel, StackFactory factory) {
        Slot slot = slot(channel);
        if (slot.factory(factory)) {
            createLimiters(slot.config);
        }
        return slot;
    }

    /*
     * The channel's throttle and budget are made when its interceptor goes on, not with the engine on the
     * first call: their gauges and the health contributor show them from start-up on. The engine asks the
     * registry for the same objects.
     */
    private void createLimiters(ChannelRetryConfig config) {
        if (engine == ChannelSetup.Engine.INTERCEPTOR && limiters != null) {
            limiters.throttle(config.channel(), config.serviceConfig().retryThrottling());
            limiters.budget(config.channel(), config.budget());
        }
    }

    /**
     * The values of the configuration keys (those {@link #concerns}) the start-up configuration was resolved
     * from: with them an outcome names the keys whose values differ from what a channel runs.
     */
    public synchronized void valuesAtStart(Map<String, String> values) {
        currentValues = Map.copyOf(values);
        for (Slot slot : slots.values()) {
            slot.values = currentValues;
        }
    }

    /** The last reload that concerned {@code channel}; absent when none did. */
    public @Nullable LastReload lastReload(String channel) {
        return lastReloads.get(channel);
    }

    /**
     * Whether a changed environment key concerns this class: anything under {@code grpc.retry}, and the
     * {@code service-config} of a channel under {@code spring.grpc.client.channel}.
     */
    public static boolean concerns(String key) {
        return key.startsWith("grpc.retry.") || bootServiceConfigChannel(key) != null;
    }

    /**
     * Resolves the configuration again and applies it channel by channel (see the class comment).
     *
     * @param resolve binds and validates the whole configuration as at start-up; throws
     *     {@link InvalidRetryConfigurationException} (or any other exception: a binding failure) to reject
     * @param keys the environment keys that changed (only those {@link #concerns} are looked at)
     */
    public Result reload(Supplier<? extends ChannelRetryConfigs> resolve, Collection<String> keys) {
        return reload(resolve, keys, null);
    }

    /**
     * As {@link #reload(Supplier, Collection)}, naming in each outcome the keys whose values differ from those
     * the channel's running configuration was made from.
     *
     * @param values the value of every configuration key ({@link #concerns}) after the change; absent = name the
     *     changed keys
     */
    public synchronized Result reload(Supplier<? extends ChannelRetryConfigs> resolve, Collection<String> keys,
            @Nullable Map<String, String> values) {
        Map<String, String> newValues = values == null ? null : Map.copyOf(values);
        Instant now = Instant.now();
        Set<String> scope = new TreeSet<>();
        boolean everyChannel = false;
        List<String> restartKeys = new ArrayList<>();
        for (String key : keys) {
            if (!concerns(key)) {
                continue;
            }
            String channel = channelOf(key);
            if (channel == null) {
                if (key.equals(UnknownProperties.IGNORE_PROPERTY)) {
                    everyChannel = true;
                } else {
                    restartKeys.add(key);
                }
            } else if (RetryConfigResolver.isGlobal(channel) || channel.equals("default") && key.startsWith(BOOT_CHANNELS)) {
                everyChannel = true;
            } else {
                scope.add(channel);
            }
        }
        Set<String> known = new TreeSet<>(slots.keySet());
        known.addAll(current.configuredChannels());
        Map<String, LastReload> outcomes = new LinkedHashMap<>();
        ChannelRetryConfigs candidate;
        try {
            candidate = Objects.requireNonNull(resolve.get(), "resolved configuration");
        } catch (InvalidRetryConfigurationException e) {
            List<String> described = new ArrayList<>();
            e.getProblems().forEach(p -> described.add(p.describe()));
            reject(everyChannel || scope.isEmpty() ? known : within(known, scope), now, String.join("; ", described),
                    outcomes);
            return new Result(outcomes, e.getProblems(), e);
        } catch (RuntimeException e) {
            reject(everyChannel || scope.isEmpty() ? known : within(known, scope), now, rootMessage(e), outcomes);
            return new Result(outcomes, List.of(), e);
        }
        known.addAll(candidate.configuredChannels());
        for (String channel : known) {
            ChannelRetryConfig before = forChannel(channel);
            Slot slot = slots.get(channel);
            ChannelRetryConfig own = candidate.forChannel(channel);
            ChannelRetryConfig after = slot == null ? own : PolicySources.layered(own, slot.resolver);
            boolean built = slot != null && slot.built;
            Map<String, String> running = slot != null ? slot.values : currentValues;
            List<String> differing = newValues != null && running != null
                    ? differingKeys(channel, running, newValues) : keysOf(channel, keys, "");
            boolean concerned = everyChannel || matchesAny(scope, channel);
            if (before.equals(after)) {
                if (slot != null && restartKeys.isEmpty()) {
                    slot.own = own;
                }
                if (built && !restartKeys.isEmpty()) {
                    record(channel, now, Outcome.RESTART_REQUIRED, restartMessage(restartKeys, List.of()), outcomes);
                } else if (concerned) {
                    record(channel, now, Outcome.UNCHANGED, "unchanged, the channel already runs this configuration"
                            + listed(keysOf(channel, keys, "")), outcomes);
                }
                if (slot != null && newValues != null) {
                    slot.values = newValues;
                }
                continue;
            }
            List<String> needRestart = built ? restartKeys(before, after, differing) : List.of();
            if (!needRestart.isEmpty() && !concerned && restartKeys.isEmpty()) {
                continue; // a change held earlier, and nothing of this refresh concerns the channel: reported then
            }
            if (!needRestart.isEmpty() || built && !restartKeys.isEmpty()) {
                List<String> all = new ArrayList<>(needRestart);
                all.addAll(restartKeys);
                List<String> held = new ArrayList<>(differing);
                held.removeIf(k -> all.stream().anyMatch(r -> r.contains(k)));
                record(channel, now, Outcome.RESTART_REQUIRED, restartMessage(all, held), outcomes);
                continue;
            }
            if (slot != null) {
                apply(slot, own, after);
                if (newValues != null) {
                    slot.values = newValues;
                }
            }
            record(channel, now, Outcome.APPLIED, "applied" + listed(differing), outcomes);
        }
        current = candidate;
        if (newValues != null) {
            currentValues = newValues;
        }
        return new Result(outcomes, List.of(), null);
    }

    /**
     * Records a refresh that failed before its configuration could be read ({@code failed} on every channel:
     * any of them may have changed in it); every channel keeps what it runs.
     */
    public synchronized Result failed(RuntimeException failure) {
        Set<String> known = new TreeSet<>(slots.keySet());
        known.addAll(current.configuredChannels());
        Map<String, LastReload> outcomes = new LinkedHashMap<>();
        String message = "failed, the configuration could not be read and the running one stays: "
                + failure.getClass().getSimpleName() + ": " + rootMessage(failure).replaceAll("\\s+", " ").trim();
        Instant now = Instant.now();
        for (String channel : known) {
            record(channel, now, Outcome.FAILED, message, outcomes);
        }
        return new Result(outcomes, List.of(), failure);
    }

    /** The keys of {@code channel} (its own, GLOBAL's, Boot's) whose values differ between the two maps. */
    private static List<String> differingKeys(String channel, Map<String, String> before, Map<String, String> after) {
        Set<String> all = new TreeSet<>(before.keySet());
        all.addAll(after.keySet());
        List<String> out = new ArrayList<>();
        for (String key : all) {
            if (belongsTo(key, channel) && !Objects.equals(before.get(key), after.get(key))) {
                out.add(key);
            }
        }
        return out;
    }

    private void reject(Collection<String> channels, Instant now, String reason, Map<String, LastReload> outcomes) {
        String message = "rejected, the running configuration stays: " + reason;
        for (String channel : channels) {
            record(channel, now, Outcome.REJECTED, message, outcomes);
        }
    }

    private void record(String channel, Instant now, Outcome outcome, String message, Map<String, LastReload> outcomes) {
        LastReload last = new LastReload(now, outcome, message);
        lastReloads.put(channel, last);
        outcomes.put(channel, last);
    }

    private void apply(Slot slot, ChannelRetryConfig own, ChannelRetryConfig config) {
        if (engine == ChannelSetup.Engine.INTERCEPTOR && limiters != null && slot.hasFactory()) {
            limiters.replaceThrottle(config.channel(), config.serviceConfig().retryThrottling());
            limiters.replaceBudget(config.channel(), config.budget());
        }
        slot.swap(own, config);
    }

    /**
     * What of the change from {@code before} to {@code after} a built channel cannot take, as the keys that
     * changed it (or the channel's property path when no changed key names it); empty = none.
     */
    private List<String> restartKeys(ChannelRetryConfig before, ChannelRetryConfig after, Collection<String> keys) {
        String channel = after.channel();
        Set<String> out = new LinkedHashSet<>();
        if (engine == ChannelSetup.Engine.NATIVE) {
            List<String> named = keysOf(channel, keys, "");
            out.add("grpc.retry.engine=native fixes a channel's service config and retry settings when it is built ("
                    + String.join(", ", named.isEmpty() ? List.of(CLIENTS + channel) : named) + ")");
            return List.copyOf(out);
        }
        if (before.maxAttemptsCap() != after.maxAttemptsCap()) {
            out.addAll(named(channel, keys, "max-attempts-cap"));
        }
        if (before.perRpcBufferLimit() != after.perRpcBufferLimit()) {
            out.addAll(named(channel, keys, "per-rpc-buffer-limit"));
        }
        if (before.retryBufferSize() != after.retryBufferSize()) {
            out.addAll(named(channel, keys, "retry-buffer-size"));
        }
        if (!Objects.equals(before.connectTimeout(), after.connectTimeout())) {
            out.addAll(named(channel, keys, "connect-timeout"));
        }
        if (!ChannelSetup.serviceConfigMap(before, ChannelSetup.Engine.INTERCEPTOR)
                .equals(ChannelSetup.serviceConfigMap(after, ChannelSetup.Engine.INTERCEPTOR))) {
            List<String> named = new ArrayList<>();
            for (String part : List.of("timeout", "wait-for-ready", "max-request-message", "max-response-message")) {
                named.addAll(keysOf(channel, keys, "." + part));
            }
            out.add((named.isEmpty() ? CLIENTS + channel + ".service-config" : String.join(", ", named))
                    + " (method timeouts, wait-for-ready and message limits are set in grpc-java's default service"
                    + " config when the channel is built)");
        }
        return List.copyOf(out);
    }

    private static List<String> named(String channel, Collection<String> keys, String property) {
        List<String> named = keysOf(channel, keys, "." + property);
        return named.isEmpty() ? List.of(CLIENTS + channel + "." + property) : named;
    }

    /** The changed keys of {@code channel} (its own, GLOBAL's, Boot's) that contain {@code part}. */
    private static List<String> keysOf(String channel, Collection<String> keys, String part) {
        List<String> out = new ArrayList<>();
        for (String key : keys) {
            if (belongsTo(key, channel) && key.contains(part)) {
                out.add(key);
            }
        }
        return out;
    }

    /** Whether {@code key} configures {@code channel}: its own key, a GLOBAL one or a Boot {@code default} one. */
    private static boolean belongsTo(String key, String channel) {
        String of = concerns(key) ? channelOf(key) : null;
        return of != null && (RetryConfigResolver.matches(of, channel) || RetryConfigResolver.isGlobal(of) || of.equals("default"));
    }

    /** Whether one of the entry names {@code names} applies to {@code channel}, by start-up's rule ({@link RetryConfigResolver#matches}). */
    private static boolean matchesAny(Collection<String> names, String channel) {
        for (String name : names) {
            if (RetryConfigResolver.matches(name, channel)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The channels of {@code known} that one of the entry names {@code names} applies to, and each name that
     * applies to none of them (a new entry).
     */
    private static Set<String> within(Collection<String> known, Collection<String> names) {
        Set<String> out = new TreeSet<>();
        for (String channel : known) {
            if (matchesAny(names, channel)) {
                out.add(channel);
            }
        }
        for (String name : names) {
            if (!matchesAny(known, name)) {
                out.add(name);
            }
        }
        return out;
    }

    private static String listed(List<String> keys) {
        return keys.isEmpty() ? "" : " (" + String.join(", ", keys) + ")";
    }

    private static String restartMessage(List<String> keys, List<String> held) {
        return "restart required, the channel keeps its running configuration: " + String.join("; ", keys)
                + (held.isEmpty() ? "" : "; held with it: " + String.join(", ", held));
    }

    /**
     * The channel a key belongs to: the name after {@code grpc.retry.clients.} (bracketed names such as
     * {@code [in-process:inventory]} without brackets), or after {@code spring.grpc.client.channel.} for a
     * service-config key; absent for any other key.
     */
    static @Nullable String channelOf(String key) {
        if (key.startsWith(CLIENTS)) {
            return firstElement(key.substring(CLIENTS.length()));
        }
        return bootServiceConfigChannel(key);
    }

    private static @Nullable String bootServiceConfigChannel(String key) {
        if (!key.startsWith(BOOT_CHANNELS)) {
            return null;
        }
        String rest = key.substring(BOOT_CHANNELS.length());
        String name = firstElement(rest);
        int after = rest.startsWith("[") ? name.length() + 2 : name.length();
        return rest.startsWith(".service-config", after) ? name : null;
    }

    private static String firstElement(String rest) {
        if (rest.startsWith("[")) {
            int end = rest.indexOf(']');
            return end < 0 ? rest.substring(1) : rest.substring(1, end);
        }
        int end = rest.length();
        for (char c : new char[] {'.', '['}) {
            int i = rest.indexOf(c);
            if (i >= 0 && i < end) {
                end = i;
            }
        }
        return rest.substring(0, end);
    }

    private static String rootMessage(Throwable e) {
        StringBuilder out = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t.getMessage() != null && (out.length() == 0 || !out.toString().contains(t.getMessage()))) {
                out.append(out.length() == 0 ? "" : ": ").append(t.getMessage());
            }
        }
        return out.length() == 0 ? e.getClass().getName() : out.toString();
    }

    private Slot slot(String channel) {
        return slots.computeIfAbsent(channel, name -> new Slot(current.forChannel(name), currentValues));
    }

    @Override
    public String toString() {
        return "ReloadableChannels" + slots.keySet();
    }

    /**
     * One channel: the configuration it runs and its interceptors, swapped together. The interceptors are
     * made on the channel's first call (a start-up loads none of the engine) and again after each applied
     * reload of a channel that has made them.
     */
    private static final class Slot implements ClientInterceptor {

        /** What the channel runs: {@link #own} with the policies of {@link #resolver} laid under it. */
        volatile ChannelRetryConfig config;
        /** The channel's own configuration. */
        volatile ChannelRetryConfig own;
        /** The retry parts of the service config the channel's name resolver supplied last; absent = none. */
        volatile @Nullable ServiceConfig resolver;
        /** The values of the configuration keys {@link #config} was made from; absent while not given. */
        volatile @Nullable Map<String, String> values;
        volatile boolean built;
        @GuardedBy("this")
        private @Nullable StackFactory factory;
        volatile @Nullable Generation generation;
        /** Calls waiting for the resolver's first answer; absent = calls do not wait. */
        @GuardedBy("this")
        private @Nullable List<ResolverWaitingCall<?, ?>> waiting;
        @GuardedBy("this")
        private boolean resolverAnswered;
        private volatile boolean awaitingResolver;

        Slot(ChannelRetryConfig config, @Nullable Map<String, String> values) {
            this.config = config;
            this.own = config;
            this.values = values;
        }

        synchronized void awaitResolver() {
            if (!resolverAnswered && waiting == null) {
                waiting = new ArrayList<>();
                awaitingResolver = true;
            }
        }

        void resolverAnswered() {
            List<ResolverWaitingCall<?, ?>> released;
            synchronized (this) {
                resolverAnswered = true;
                awaitingResolver = false;
                released = waiting;
                waiting = null;
            }
            if (released != null) {
                released.forEach(ResolverWaitingCall::release);
            }
        }

        /** Whether {@code call} waits for the resolver's first answer (false: it has come). */
        private synchronized boolean await(ResolverWaitingCall<?, ?> call) {
            if (waiting == null) {
                return false;
            }
            waiting.add(call);
            return true;
        }

        /** Takes the channel's stack factory, the first one given; whether it was taken. */
        synchronized boolean factory(StackFactory factory) {
            if (this.factory != null) {
                return false;
            }
            this.factory = factory;
            return true;
        }

        synchronized boolean hasFactory() {
            return factory != null;
        }

        synchronized void swap(ChannelRetryConfig nextOwn, ChannelRetryConfig next) {
            Generation before = generation;
            if (factory != null && before != null) {
                generation = new Generation(factory.stack(next, before.engine()));
            }
            own = nextOwn;
            config = next;
        }

        /** The current interceptors, made now on the channel's first call; null while no factory is given. */
        private synchronized @Nullable Generation first() {
            Generation g = generation;
            if (g == null && factory != null) {
                g = new Generation(factory.stack(config, null));
                generation = g;
            }
            return g;
        }

        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                CallOptions callOptions, Channel next) {
            if (awaitingResolver) {
                ResolverWaitingCall<ReqT, RespT> call = new ResolverWaitingCall<>(
                        () -> newCall(method, callOptions, next), callOptions.getDeadline());
                if (await(call)) {
                    // grpc-java leaves its idle mode (and starts the resolver) when a call is made on it
                    next.newCall(method, callOptions).cancel("made only to start the name resolver", null);
                } else {
                    call.release();
                }
                return call;
            }
            return newCall(method, callOptions, next);
        }

        private <ReqT, RespT> ClientCall<ReqT, RespT> newCall(MethodDescriptor<ReqT, RespT> method,
                CallOptions callOptions, Channel next) {
            Generation g = generation;
            if (g == null) {
                g = first();
            }
            return g == null ? next.newCall(method, callOptions) : g.over(next).newCall(method, callOptions);
        }
    }

    /** One configuration's interceptors, composed over the channel below them (cached per channel below). */
    private static final class Generation {
        private final List<ClientInterceptor> interceptors;
        private volatile @Nullable Composed last;

        Generation(List<ClientInterceptor> interceptors) {
            this.interceptors = List.copyOf(interceptors);
        }

        Channel over(Channel next) {
            Composed c = last;
            if (c != null && c.next == next) {
                return c.composed;
            }
            Channel composed = ClientInterceptors.interceptForward(next, interceptors);
            last = new Composed(next, composed);
            return composed;
        }

        @Nullable RetryingClientInterceptor engine() {
            for (ClientInterceptor i : interceptors) {
                if (i instanceof RetryingClientInterceptor r) {
                    return r;
                }
            }
            return null;
        }
    }

    private record Composed(Channel next, Channel composed) {
    }
}
