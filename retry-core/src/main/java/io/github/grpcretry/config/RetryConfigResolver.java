package io.github.grpcretry.config;

import io.github.grpcretry.internal.config.ChannelNames;
import io.github.grpcretry.internal.config.ConfigNaming;
import io.github.grpcretry.internal.config.HedgingPolicyDraft;
import io.github.grpcretry.internal.config.MethodConfigDraft;
import io.github.grpcretry.internal.config.RetryConfigValidator;
import io.github.grpcretry.internal.config.RetryPolicyField;
import io.github.grpcretry.internal.config.RetryThrottlingDraft;
import io.github.grpcretry.internal.config.ServiceConfigDraft;
import io.github.grpcretry.internal.config.ServiceConfigJson;
import io.github.grpcretry.internal.config.Sourced;
import io.github.grpcretry.internal.config.StatusCodes;
import io.github.grpcretry.internal.time.Durations;
import io.github.grpcretry.policy.AdaptiveHedgingPolicy;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.policy.ServiceConfigCustomizer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Makes the effective configuration of every channel from the {@code grpc.retry.clients.*} property
 * tree, the service-config JSON files it names, an optional base layer per channel (a service-config
 * map such as Spring Boot 4's {@code spring.grpc.client.channel.<name>.service-config}) and the
 * {@link ServiceConfigCustomizer}s. For the auto-configuration modules of both Spring Boot lines: each
 * binds the tree with its own Spring types and hands it over as the plain records below.
 *
 * <p>Layers, lowest first: the base layer, the file, the typed properties (an entry with the same set
 * of names overlays the lower one field by field; other entries are added); then GLOBAL's channel-wide
 * settings are inherited field by field, everything is validated, the channel's entries are layered over
 * GLOBAL's, the customizers run (their result is validated again) and attempts are capped. Every invalid
 * value is reported, together, as one {@link InvalidRetryConfigurationException} whose problems name the
 * full property path ({@code grpc.retry.clients.inventory.service-config.method[0].retry.max-attempts}),
 * the file and its JSON path, or the base layer's path and its JSON path. The rules are described in
 * docs/design.md.
 */
public final class RetryConfigResolver {

    /** The prefix of a channel's properties: {@code grpc.retry.clients.<channel>}. */
    public static final String CLIENTS_PREFIX = "grpc.retry.clients.";

    private final Map<String, ClientProperties> clients = new LinkedHashMap<>();
    private final Map<String, BaseLayer> bases = new LinkedHashMap<>();
    private List<ServiceConfigCustomizer> customizers = List.of();
    private Consumer<String> warnings = w -> { };
    private boolean nativeEngine;

    /** A base layer: a service-config map (JSON names) or the typed property tree, and where it came from. */
    private record BaseLayer(@Nullable Map<String, ?> serviceConfig, @Nullable ServiceConfigProperties typed, String path) {
    }

    private RetryConfigResolver() {
    }

    /** An empty resolver: no channel configured, no customizer, warnings dropped. */
    public static RetryConfigResolver create() {
        return new RetryConfigResolver();
    }

    /**
     * The properties under {@code grpc.retry.clients.<key>}; a key equal to {@code GLOBAL} in any case
     * is the entry every channel inherits from.
     */
    public RetryConfigResolver client(String key, ClientProperties properties) {
        clients.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(properties, "properties"));
        return this;
    }

    /**
     * The lowest layer of {@code channel}'s service config: a map in the shape grpc-java's
     * {@code defaultServiceConfig} takes (the JSON names: {@code methodConfig}, {@code retryPolicy},
     * {@code retryThrottling}, ...). Problems are named {@code <path> $.<json path>}.
     *
     * @param path where the map came from, e.g. {@code spring.grpc.client.channel.inventory.service-config}
     */
    public RetryConfigResolver baseServiceConfig(String channel, Map<String, ?> serviceConfig, String path) {
        bases.put(Objects.requireNonNull(channel, "channel"),
                new BaseLayer(Objects.requireNonNull(serviceConfig, "serviceConfig"), null, Objects.requireNonNull(path, "path")));
        return this;
    }

    /**
     * The lowest layer of {@code channel}'s service config, given as bound typed properties in the
     * shape of the {@code service-config} property tree (Spring Boot 4's
     * {@code spring.grpc.client.channel.<name>.service-config}). Problems are named by property path
     * under {@code path}: {@code <path>.method[0].retry.max-attempts}.
     *
     * @param path the property path of the tree, e.g. {@code spring.grpc.client.channel.inventory.service-config}
     */
    public RetryConfigResolver baseServiceConfig(String channel, ServiceConfigProperties serviceConfig, String path) {
        bases.put(Objects.requireNonNull(channel, "channel"),
                new BaseLayer(null, Objects.requireNonNull(serviceConfig, "serviceConfig"), Objects.requireNonNull(path, "path")));
        return this;
    }

    /** Applied in this order to every channel's merged service config. */
    public RetryConfigResolver customizers(List<? extends ServiceConfigCustomizer> customizers) {
        this.customizers = List.copyOf(customizers);
        return this;
    }

    /** Receives each cap warning once (a max-attempts above the channel's cap). */
    public RetryConfigResolver warnings(Consumer<String> warnings) {
        this.warnings = Objects.requireNonNull(warnings, "warnings");
        return this;
    }

    /**
     * Whether the channels run grpc-java's own retry ({@code grpc.retry.engine: native}): then a
     * per-attempt receive timeout, which grpc-java parses but never applies, is reported once through
     * {@link #warnings}.
     */
    public RetryConfigResolver nativeEngine(boolean nativeEngine) {
        this.nativeEngine = nativeEngine;
        return this;
    }

    /**
     * Validates and merges every channel. Channels without properties of their own get what GLOBAL
     * (and their base layer, if any) gives them, when first asked for.
     *
     * @throws InvalidRetryConfigurationException listing every problem
     */
    public ChannelRetryConfigs resolve() {
        List<ConfigProblem> problems = new ArrayList<>();
        Map<String, ChannelDraft> drafts = new LinkedHashMap<>();
        Map<String, String> keysByUniformName = new LinkedHashMap<>();
        for (Map.Entry<String, ClientProperties> e : clients.entrySet()) {
            String key = e.getKey();
            String first = keysByUniformName.putIfAbsent(ChannelNames.uniform(key), key);
            if (first != null) {
                // Spring binds keys that differ only in case, '-' or '_' (a YAML key and an environment variable)
                // from the same properties: one entry. Bracketed keys are bound apart: two entries for one channel.
                if (!e.getValue().equals(clients.get(first))) {
                    problems.add(twoEntriesForOneChannel(first, key));
                }
                continue;
            }
            String channel = ChannelNames.isGlobal(key) ? ChannelRetryConfigs.GLOBAL : key;
            drafts.put(channel, channelDraft(channel, CLIENTS_PREFIX + key, e.getValue(), problems));
        }
        for (Map.Entry<String, BaseLayer> e : bases.entrySet()) {
            String channel = e.getKey();
            BaseLayer layer = e.getValue();
            ChannelDraft global = drafts.get(ChannelRetryConfigs.GLOBAL);
            if (global != null && ChannelNames.isGlobal(channel)) {
                problems.add(ResolvedChannelRetryConfigs.reservedName(channel, global.path()));
                continue;
            }
            ServiceConfigDraft base = layer.typed() != null ? serviceConfig(layer.path(), layer.typed())
                    : parseMap(layer, problems);
            ChannelDraft own = drafts.get(channel);
            if (own == null) {
                own = ownEntry(drafts, channel);
            }
            drafts.put(channel, own.withServiceConfig(own.serviceConfig().overlay(base)));
        }
        ResolvedChannelRetryConfigs resolved = ResolvedChannelRetryConfigs.resolve(drafts, customizers, problems, warnings);
        if (nativeEngine) {
            String warning = nativeIgnoresPerAttemptTimeout(drafts, resolved);
            if (warning != null) {
                warnings.accept(warning);
            }
            nativeIgnoresInterceptorOnlySettings(drafts).forEach(warnings);
        }
        return resolved;
    }

    /**
     * Whether the entry {@code grpc.retry.clients.<key>} applies to {@code channel}: the same name, or the
     * same name in Spring Boot's uniform form (lower case, letters and digits only), as Spring's relaxed
     * binding matches keys ({@code MySvc}, {@code my-svc} and the environment's {@code MYSVC} are one name).
     */
    public static boolean matches(String key, String channel) {
        return ChannelNames.matches(key, channel);
    }

    /** Whether {@code key} names the GLOBAL entry, in any spelling that folds to {@code global}. */
    public static boolean isGlobal(String key) {
        return ChannelNames.isGlobal(key);
    }

    /** {@code name} in Spring Boot's uniform form: lower case, letters and digits only ({@code my-svc} is {@code mysvc}). */
    public static String uniformName(String name) {
        return ChannelNames.uniform(name);
    }

    /**
     * The retry parts of a service config a channel's name resolver supplied (a map in the JSON shape
     * grpc-java parses), read and validated by the rules of every other service config.
     *
     * @param source how problems name it, e.g. {@code the service config of channel inventory's name resolver}
     * @throws InvalidRetryConfigurationException listing every problem
     */
    public static ServiceConfig readServiceConfig(Map<String, ?> serviceConfig, String source) {
        return ServiceConfigJson.read(serviceConfig, source);
    }

    /**
     * A retry policy as the endpoint shows it: each field that is set, by its Java name ({@code maxAttempts},
     * {@code initialBackoff}, ...), durations as text, status codes as names, in the order of the
     * retry-policy field table (docs/design.md §13).
     */
    public static Map<String, Object> report(io.github.grpcretry.policy.RetryPolicy policy) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (RetryPolicyField f : RetryPolicyField.values()) {
            Object v = f.value(policy);
            if (v != null) {
                out.put(f.javaName(), f.kind().toReport(v));
            }
        }
        return out;
    }

    /** The entry whose name has the same uniform form as {@code channel} (GLOBAL aside), else an empty one. */
    private static ChannelDraft ownEntry(Map<String, ChannelDraft> drafts, String channel) {
        for (Map.Entry<String, ChannelDraft> d : drafts.entrySet()) {
            if (!d.getKey().equals(ChannelRetryConfigs.GLOBAL) && ChannelNames.matches(d.getKey(), channel)) {
                return d.getValue();
            }
        }
        return ChannelDraft.empty(channel, CLIENTS_PREFIX + channel);
    }

    private static ConfigProblem twoEntriesForOneChannel(String first, String second) {
        return new ConfigProblem(CLIENTS_PREFIX + "[" + second + "]", "(an entry; so is " + CLIENTS_PREFIX + "[" + first + "])",
                "two entries match the same channel: channel names are matched as Spring Boot matches keys (in lower"
                        + " case, letters and digits only, so " + first + " and " + second + " are one name), and these two"
                        + " entries set different values",
                "merge them into one entry, " + CLIENTS_PREFIX + first);
    }

    /**
     * The one start-up warning for the native engine with a per-attempt receive timeout set, naming
     * every place that sets one (a property path, a service-config file's JSON path, or
     * {@code ServiceConfigCustomizer(<channel>)} when only a customizer adds it to a configured
     * channel); null when none is set. grpc-java 1.85 parses {@code perAttemptRecvTimeout} into its
     * retry policy but never applies it: a stalled attempt is cut only by the call's deadline
     * (docs/design.md, deliberate differences).
     */
    static @Nullable String nativeIgnoresPerAttemptTimeout(Map<String, ChannelDraft> drafts,
            ResolvedChannelRetryConfigs resolved) {
        Set<String> places = new LinkedHashSet<>();
        Set<String> channelsWithOwnPaths = new HashSet<>();
        for (Map.Entry<String, ChannelDraft> e : drafts.entrySet()) {
            for (MethodConfigDraft m : e.getValue().serviceConfig().methodConfigs()) {
                RetryPolicyField.Draft r = m.retryPolicy();
                Sourced<Duration> timeout = r == null ? null : r.perAttemptReceiveTimeout();
                if (timeout != null) {
                    places.add(timeout.path() + " = " + timeout.display());
                    channelsWithOwnPaths.add(e.getKey());
                }
            }
        }
        boolean globalSetsIt = channelsWithOwnPaths.contains(ChannelRetryConfigs.GLOBAL);
        for (String channel : resolved.configuredChannels()) {
            if (globalSetsIt || channelsWithOwnPaths.contains(channel)) {
                continue;
            }
            if (hasPerAttemptTimeout(resolved.forChannel(channel).serviceConfig())) {
                places.add("ServiceConfigCustomizer(" + channel + ")");
            }
        }
        if (places.isEmpty()) {
            return null;
        }
        return "per-attempt-receive-timeout is ignored: grpc.retry.engine=native (grpc-java's own retry) reads "
                + "perAttemptRecvTimeout from the service config but never applies it, so a stalled attempt is not "
                + "cut and retried; only the call's deadline ends it. Set at: " + String.join(", ", places)
                + ". Use grpc.retry.engine=interceptor to have it applied, or remove it";
    }

    /**
     * The start-up warnings for the native engine with settings only the interceptor engine applies: one per group
     * of the channel-wide field table ({@link InterceptorOnly}: retry-info, adaptive-hedging, budget,
     * avoid-tried-backends, streams), each naming every property that sets one.
     */
    static List<String> nativeIgnoresInterceptorOnlySettings(Map<String, ChannelDraft> drafts) {
        Map<InterceptorOnly, List<String>> places = new EnumMap<>(InterceptorOnly.class);
        for (ChannelDraft d : drafts.values()) {
            for (ChannelField f : ChannelField.values()) {
                Sourced<?> s = f.sourced(d.properties(), d.path());
                if (s != null && f.interceptorOnly != null) {
                    places.computeIfAbsent(f.interceptorOnly, g -> new ArrayList<>()).add(s.path() + " = " + s.display());
                }
            }
        }
        List<String> out = new ArrayList<>(places.size());
        places.forEach((group, where) -> out.add(group.warning(where)));
        return out;
    }

    private static boolean hasPerAttemptTimeout(ServiceConfig config) {
        for (MethodConfig m : config.methodConfigs()) {
            if (m.retryPolicy() != null && m.retryPolicy().perAttemptReceiveTimeout() != null) {
                return true;
            }
        }
        return false;
    }

    /**
     * A status code as the property tree accepts it: a name in any case ({@code unavailable},
     * {@code UNAVAILABLE}, {@code deadline-exceeded}) or a number ({@code 14}). For the converter through
     * which each Spring Boot line binds {@code retryable-status-codes} and {@code non-fatal-status-codes}
     * as {@link io.grpc.Status.Code} values (so that IDEs complete them as an enum).
     *
     * @throws IllegalArgumentException naming the value and what is accepted, when it names no code
     */
    public static io.grpc.Status.Code statusCode(String text) {
        return StatusCodes.parse(text);
    }

    /**
     * {@code d} as a user writes it in {@code application.yml}: a whole number in the largest unit that holds
     * it exactly ({@code "50ms"}, {@code "1500ms"}, {@code "2m"}), the form Spring Boot reads back; how problems
     * and the endpoint show a duration.
     */
    public static String durationText(Duration d) {
        return Durations.toText(d);
    }

    /**
     * Whether {@code d} is within the longest duration accepted anywhere, in either direction: 2<sup>63</sup>-1
     * nanoseconds (about 292 years), the unit grpc-java and the engine work in.
     */
    public static boolean fitsInNanos(Duration d) {
        return Durations.fitsInNanos(d);
    }

    private static @Nullable ServiceConfigDraft parseMap(BaseLayer base, List<ConfigProblem> problems) {
        Map<String, ?> map = Objects.requireNonNull(base.serviceConfig(), "a base layer without typed properties has a map");
        return ServiceConfigJson.parse(map, base.path(), problems);
    }

    private static ChannelDraft channelDraft(String channel, String path, ClientProperties c, List<ConfigProblem> problems) {
        ServiceConfigDraft typed = serviceConfig(path + ".service-config", c.serviceConfig());
        ServiceConfigDraft file = null;
        ServiceConfigFile f = c.serviceConfigFile();
        if (f != null) {
            String property = path + ".service-config-file";
            if (f.text() == null) {
                problems.add(new ConfigProblem(property, f.name(), f.problem() == null ? "the service config file cannot be read"
                        : f.problem(), f.fix() == null ? "point it to a readable file" : f.fix()));
            } else {
                file = ServiceConfigJson.parseFile(f.text(), f.name(), problems);
            }
        }
        return new ChannelDraft(channel, path, typed.overlay(file), c, null);
    }

    private static ServiceConfigDraft serviceConfig(String path, @Nullable ServiceConfigProperties sc) {
        if (sc == null) {
            return ServiceConfigDraft.EMPTY;
        }
        List<MethodConfigDraft> methods = new ArrayList<>();
        List<@Nullable MethodProperties> list = sc.method() == null ? List.of() : sc.method();
        for (int i = 0; i < list.size(); i++) {
            MethodProperties m = list.get(i);
            if (m != null) {
                methods.add(method(path + ".method[" + i + "]", m));
            }
        }
        RetryThrottlingDraft throttling = null;
        RetryThrottlingProperties t = sc.retrythrottling();
        if (t != null) {
            String tp = path + ".retrythrottling";
            throttling = new RetryThrottlingDraft(tp, ConfigNaming.PROPERTIES, Sourced.of(t.maxTokens(), tp + ".max-tokens"),
                    Sourced.of(t.tokenRatio(), tp + ".token-ratio"));
        }
        return new ServiceConfigDraft(methods, throttling);
    }

    private static MethodConfigDraft method(String path, MethodProperties m) {
        List<Sourced<MethodName>> names = new ArrayList<>();
        List<@Nullable NameProperties> given = m.name() == null ? List.of() : m.name();
        for (int j = 0; j < given.size(); j++) {
            NameProperties n = given.get(j);
            MethodName name = n == null ? MethodName.DEFAULT : new MethodName(n.service(), n.method());
            names.add(new Sourced<>(name, path + ".name[" + j + "]", name.toString()));
        }
        if (names.isEmpty()) {
            // An entry without names applies to every method of the channel (gRPC's "name": [{}]).
            names.add(new Sourced<>(MethodName.DEFAULT, path + ".name", MethodName.DEFAULT.toString()));
        }
        RetryPolicyField.Draft retry = null;
        RetryProperties r = m.retry();
        if (r != null) {
            String rp = path + ".retry";
            retry = new RetryPolicyField.Draft(rp, ConfigNaming.PROPERTIES,
                    Sourced.of(r.maxAttempts(), at(rp, RetryPolicyField.MAX_ATTEMPTS)),
                    Sourced.of(r.initialBackoff(), at(rp, RetryPolicyField.INITIAL_BACKOFF)),
                    Sourced.of(r.maxBackoff(), at(rp, RetryPolicyField.MAX_BACKOFF)),
                    Sourced.of(r.backoffMultiplier(), at(rp, RetryPolicyField.BACKOFF_MULTIPLIER)),
                    Sourced.of(r.retryableStatusCodes(), at(rp, RetryPolicyField.RETRYABLE_STATUS_CODES)),
                    Sourced.of(r.perAttemptReceiveTimeout(), at(rp, RetryPolicyField.PER_ATTEMPT_RECEIVE_TIMEOUT)));
        }
        HedgingPolicyDraft hedging = null;
        HedgingProperties h = m.hedging();
        if (h != null) {
            String hp = path + ".hedging";
            hedging = new HedgingPolicyDraft(hp, ConfigNaming.PROPERTIES,
                    Sourced.of(h.maxAttempts(), hp + ".max-attempts"),
                    Sourced.of(h.delay(), hp + ".delay"),
                    codes(h.nonFatalStatusCodes(), hp + ".non-fatal-status-codes"));
        }
        return new MethodConfigDraft(path, ConfigNaming.PROPERTIES, names,
                Sourced.of(m.waitForReady(), path + ".wait-for-ready"),
                Sourced.of(m.timeout(), path + ".timeout"),
                bytes(m.maxRequestMessage(), path + ".max-request-message"),
                bytes(m.maxResponseMessage(), path + ".max-response-message"),
                retry, hedging);
    }

    /** The property path of {@code field} in the retry policy at {@code policyPath}. */
    private static String at(String policyPath, RetryPolicyField field) {
        return policyPath + "." + field.propertyName();
    }

    private static @Nullable Sourced<List<String>> codes(@Nullable List<String> codes, String path) {
        return codes == null ? null : new Sourced<>(List.copyOf(codes), path, codes.toString());
    }

    private static @Nullable Sourced<Long> bytes(@Nullable Size size, String path) {
        return size == null ? null : new Sourced<>(size.bytes(), path, size.display());
    }

    // ------------------------------------------------------------------ the channel-wide field table

    /**
     * The table of channel-wide fields: the keys directly under {@code grpc.retry.clients.<channel>} (and their
     * groups, {@code budget.*}, {@code adaptive-hedging.*}, {@code streams.*}) that GLOBAL passes on field by field.
     * For each: its property name (the problem's path is the channel's prefix and this name), its default, its
     * accessor on {@link ClientProperties}, whether only the interceptor engine applies it (the native engine's
     * start-up warning), and its rule ({@link #check}: the problem text and fix at the value's path). One table
     * drives the draft's values and GLOBAL's inheritance ({@link ChannelDraft#get}), the validation, the
     * {@link ChannelRetryConfig} made ({@link #settings}) and the native engine's warning. docs/design.md ("Adding a
     * channel-wide property") lists what a new field needs.
     *
     * <p>The order of the constants is the order of the problems in the start-up report.
     */
    enum ChannelField {

        MAX_ATTEMPTS_CAP("max-attempts-cap", ChannelRetryConfig.DEFAULT_MAX_ATTEMPTS_CAP, null) {
            @Override
            @Nullable Object check(Sourced<?> s, Map<ChannelField, Object> earlier, RetryConfigValidator v) {
                int cap = (Integer) s.value();
                return cap < 1 ? valid(s, v, false, "must be >= 1",
                                "use 1 to turn retries and hedging off for the channel, or a larger cap (default 5)")
                        : valid(s, v, cap <= MAX_ATTEMPTS_CAP_LIMIT, "must be at most " + MAX_ATTEMPTS_CAP_LIMIT
                                + ": each failing call would send up to this many attempts",
                                "use a cap such as 5 (the default); let the call's deadline, not the attempt count, bound a long wait");
            }
        },
        PER_RPC_BUFFER_LIMIT("per-rpc-buffer-limit", ChannelRetryConfig.DEFAULT_PER_RPC_BUFFER_LIMIT, null) {
            @Override
            @Nullable Object check(Sourced<?> s, Map<ChannelField, Object> earlier, RetryConfigValidator v) {
                return valid(s, v, (Long) s.value() > 0, "must be > 0", "e.g. 1MB (the default)");
            }
        },
        RETRY_BUFFER_SIZE("retry-buffer-size", ChannelRetryConfig.DEFAULT_RETRY_BUFFER_SIZE, null) {
            @Override
            @Nullable Object check(Sourced<?> s, Map<ChannelField, Object> earlier, RetryConfigValidator v) {
                return valid(s, v, (Long) s.value() > 0, "must be > 0", "e.g. 16MB (the default)");
            }
        },
        CONNECT_TIMEOUT("connect-timeout", null, null) {
            @Override
            @Nullable Object check(Sourced<?> s, Map<ChannelField, Object> earlier, RetryConfigValidator v) {
                Duration d = (Duration) s.value();
                return valid(s, v, d.compareTo(Duration.ofMillis(1)) >= 0 && d.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) <= 0,
                        "must be at least 1ms and at most 2147483647ms", "use a positive duration such as 2s");
            }
        },
        RESILIENCE4J_RETRY("resilience4j-retry", null, null) {
            @Override
            @Nullable Object check(Sourced<?> s, Map<ChannelField, Object> earlier, RetryConfigValidator v) {
                String name = (String) s.value();
                if (name.isBlank()) {
                    v.problem(s.path(), "\"" + name + "\"", "resilience4j-retry must name a resilience4j Retry instance",
                            "set the instance name (resilience4j.retry.instances.<name>) or remove the property");
                    return null;
                }
                return name.trim();
            }
        },
        BUDGET_RATIO("budget.ratio", null, InterceptorOnly.BUDGET) {
            @Override
            @Nullable Object check(Sourced<?> s, Map<ChannelField, Object> earlier, RetryConfigValidator v) {
                double r = (Double) s.value();
                return valid(s, v, r > 0 && r <= MAX_BUDGET_RATIO, "must be in (0, 1]",
                        "use a share of calls such as 0.1 (10 %); remove the property for no budget");
            }
        },
        BUDGET_MIN_RETRIES_PER_SECOND("budget.min-retries-per-second", RetryBudgetPolicy.DEFAULT_MIN_RETRIES_PER_SECOND,
                InterceptorOnly.BUDGET) {
            @Override
            @Nullable Object check(Sourced<?> s, Map<ChannelField, Object> earlier, RetryConfigValidator v) {
                double r = (Double) s.value();
                return valid(s, v, r >= 0 && !Double.isInfinite(r), "must be >= 0",
                        "use 0 for no floor, or a small positive rate (default 10)");
            }
        },
        BUDGET_TTL("budget.ttl", RetryBudgetPolicy.DEFAULT_TTL, InterceptorOnly.BUDGET) {
            @Override
            @Nullable Object check(Sourced<?> s, Map<ChannelField, Object> earlier, RetryConfigValidator v) {
                Duration ttl = (Duration) s.value();
                return valid(s, v, ttl.compareTo(MIN_BUDGET_TTL) >= 0 && ttl.compareTo(MAX_BUDGET_TTL) <= 0,
                        "must be between 1s and 60s", "use a window between 1s and 60s (default 10s)");
            }
        },
        RETRY_INFO("retry-info", true, InterceptorOnly.RETRY_INFO),
        RETRY_INFO_MAX_DELAY("retry-info-max-delay", ChannelRetryConfig.DEFAULT_RETRY_INFO_MAX_DELAY,
                InterceptorOnly.RETRY_INFO) {
            @Override
            @Nullable Object check(Sourced<?> s, Map<ChannelField, Object> earlier, RetryConfigValidator v) {
                return positive(s, v, "use a positive duration such as 30s (the default); retry-info: false turns RetryInfo off");
            }
        },
        AVOID_TRIED_BACKENDS("avoid-tried-backends", true, InterceptorOnly.TRIED_BACKENDS),
        BACKEND_PICKS("backend-picks", ChannelRetryConfig.DEFAULT_BACKEND_PICKS,
                InterceptorOnly.TRIED_BACKENDS) {
            @Override
            @Nullable Object check(Sourced<?> s, Map<ChannelField, Object> earlier, RetryConfigValidator v) {
                int picks = (Integer) s.value();
                return valid(s, v, picks >= 1 && picks <= ChannelRetryConfig.MAX_BACKEND_PICKS,
                        "must be between 1 and " + ChannelRetryConfig.MAX_BACKEND_PICKS,
                        "use a small count such as 5 (the default); avoid-tried-backends: false turns the avoidance off");
            }
        },
        ADAPTIVE_HEDGING_ENABLED("adaptive-hedging.enabled", false, InterceptorOnly.ADAPTIVE_HEDGING),
        ADAPTIVE_HEDGING_MAX_EXTRA_LOAD("adaptive-hedging.max-extra-load", AdaptiveHedgingPolicy.DEFAULT_MAX_EXTRA_LOAD,
                InterceptorOnly.ADAPTIVE_HEDGING) {
            @Override
            @Nullable Object check(Sourced<?> s, Map<ChannelField, Object> earlier, RetryConfigValidator v) {
                double load = (Double) s.value();
                return valid(s, v, load > 0 && load <= 0.5, "must be in (0, 0.5]",
                        "use a share of calls such as 0.05 (5 %, the default)");
            }
        },
        ADAPTIVE_HEDGING_MIN_DELAY("adaptive-hedging.min-delay", AdaptiveHedgingPolicy.DEFAULT_MIN_DELAY,
                InterceptorOnly.ADAPTIVE_HEDGING) {
            @Override
            @Nullable Object check(Sourced<?> s, Map<ChannelField, Object> earlier, RetryConfigValidator v) {
                return valid(s, v, !((Duration) s.value()).isNegative(), "must be >= 0",
                        "use a small duration such as 1ms (the default)");
            }
        },
        ADAPTIVE_HEDGING_MAX_DELAY("adaptive-hedging.max-delay", null, InterceptorOnly.ADAPTIVE_HEDGING) {
            @Override
            @Nullable Object check(Sourced<?> s, Map<ChannelField, Object> earlier, RetryConfigValidator v) {
                Duration max = (Duration) s.value();
                Duration min = (Duration) Objects.requireNonNull(earlier.get(ADAPTIVE_HEDGING_MIN_DELAY));
                return valid(s, v, max.compareTo(min) >= 0 && !max.isZero(),
                        "must be > 0 and at least min-delay (" + Durations.toJson(min) + ")",
                        "raise it, lower min-delay, or remove it for no upper bound");
            }
        },
        ADAPTIVE_HEDGING_MIN_SAMPLES("adaptive-hedging.min-samples", AdaptiveHedgingPolicy.DEFAULT_MIN_SAMPLES,
                InterceptorOnly.ADAPTIVE_HEDGING) {
            @Override
            @Nullable Object check(Sourced<?> s, Map<ChannelField, Object> earlier, RetryConfigValidator v) {
                return valid(s, v, (Integer) s.value() >= 1, "must be >= 1",
                        "use the number of calls to see before the delay adapts, e.g. 100 (the default)");
            }
        },
        ADAPTIVE_HEDGING_WINDOW("adaptive-hedging.window", AdaptiveHedgingPolicy.DEFAULT_WINDOW,
                InterceptorOnly.ADAPTIVE_HEDGING) {
            @Override
            @Nullable Object check(Sourced<?> s, Map<ChannelField, Object> earlier, RetryConfigValidator v) {
                Duration window = (Duration) s.value();
                return valid(s, v, window.compareTo(MIN_ADAPTIVE_WINDOW) >= 0 && window.compareTo(MAX_ADAPTIVE_WINDOW) <= 0,
                        "must be between 1s and 1h", "use a window such as 30s (the default)");
            }
        },
        STREAMS_IDLE_TIMEOUT("streams.idle-timeout", null, InterceptorOnly.STREAMS) {
            @Override
            @Nullable Object check(Sourced<?> s, Map<ChannelField, Object> earlier, RetryConfigValidator v) {
                return positive(s, v, "use a positive duration such as 30s, longer than the longest gap between two"
                        + " messages of a healthy stream; remove it for no idle timeout");
            }
        },
        STREAMS_MAX_RESUMES("streams.max-resumes", ChannelRetryConfig.Streams.DEFAULT_MAX_RESUMES,
                InterceptorOnly.STREAMS) {
            @Override
            @Nullable Object check(Sourced<?> s, Map<ChannelField, Object> earlier, RetryConfigValidator v) {
                return valid(s, v, (Integer) s.value() >= 0, "must be >= 0",
                        "use 0 to never resume a stream, or a small count such as 3 (the default)");
            }
        };

        /** The largest max-attempts-cap: more attempts per call than this are a retry storm, not a policy. */
        static final int MAX_ATTEMPTS_CAP_LIMIT = 100;
        static final double MAX_BUDGET_RATIO = 1.0;
        static final Duration MIN_BUDGET_TTL = Duration.ofSeconds(1);
        static final Duration MAX_BUDGET_TTL = Duration.ofSeconds(60);
        static final Duration MIN_ADAPTIVE_WINDOW = Duration.ofSeconds(1);
        static final Duration MAX_ADAPTIVE_WINDOW = Duration.ofHours(1);

        private final String propertyName;
        private final @Nullable Object defaultValue;
        private final @Nullable InterceptorOnly interceptorOnly;

        ChannelField(String propertyName, @Nullable Object defaultValue, @Nullable InterceptorOnly interceptorOnly) {
            this.propertyName = propertyName;
            this.defaultValue = defaultValue;
            this.interceptorOnly = interceptorOnly;
        }

        /**
         * The field's accessor: its value in {@code c}, null when not set. A switch rather than a lambda per
         * constant, so that loading the table spins no lambda classes at start-up (docs/benchmarks.md).
         */
        private @Nullable Object value(ClientProperties c) {
            BudgetProperties budget = c.budget();
            AdaptiveHedgingProperties adaptive = c.adaptiveHedging();
            StreamsProperties streams = c.streams();
            return switch (this) {
                case MAX_ATTEMPTS_CAP -> c.maxAttemptsCap();
                case PER_RPC_BUFFER_LIMIT -> c.perRpcBufferLimit();
                case RETRY_BUFFER_SIZE -> c.retryBufferSize();
                case CONNECT_TIMEOUT -> c.connectTimeout();
                case RESILIENCE4J_RETRY -> c.resilience4jRetry();
                case BUDGET_RATIO -> budget == null ? null : budget.ratio();
                case BUDGET_MIN_RETRIES_PER_SECOND -> budget == null ? null : budget.minRetriesPerSecond();
                case BUDGET_TTL -> budget == null ? null : budget.ttl();
                case RETRY_INFO -> c.retryInfo();
                case RETRY_INFO_MAX_DELAY -> c.retryInfoMaxDelay();
                case AVOID_TRIED_BACKENDS -> c.avoidTriedBackends();
                case BACKEND_PICKS -> c.backendPicks();
                case ADAPTIVE_HEDGING_ENABLED -> adaptive == null ? null : adaptive.enabled();
                case ADAPTIVE_HEDGING_MAX_EXTRA_LOAD -> adaptive == null ? null : adaptive.maxExtraLoad();
                case ADAPTIVE_HEDGING_MIN_DELAY -> adaptive == null ? null : adaptive.minDelay();
                case ADAPTIVE_HEDGING_MAX_DELAY -> adaptive == null ? null : adaptive.maxDelay();
                case ADAPTIVE_HEDGING_MIN_SAMPLES -> adaptive == null ? null : adaptive.minSamples();
                case ADAPTIVE_HEDGING_WINDOW -> adaptive == null ? null : adaptive.window();
                case STREAMS_IDLE_TIMEOUT -> streams == null ? null : streams.idleTimeout();
                case STREAMS_MAX_RESUMES -> streams == null ? null : streams.maxResumes();
            };
        }

        /**
         * The validated channel-wide settings of {@code d} (already inheriting GLOBAL), each value left unset or
         * invalid at its default, as the {@link ChannelRetryConfig} the engine takes. The one place that lists the
         * record's channel-wide components in order.
         */
        static ChannelDraft.Settings settings(ChannelDraft d, RetryConfigValidator v) {
            Map<ChannelField, Object> values = new EnumMap<>(ChannelField.class);
            for (ChannelField f : values()) {
                Sourced<?> s = d.get(f);
                Object checked = s == null ? null : f.check(s, values, v);
                Object value = checked != null ? checked : f.defaultValue;
                if (value != null) {
                    values.put(f, value);
                }
            }
            Sourced<?> perRpc = d.get(PER_RPC_BUFFER_LIMIT);
            Sourced<?> retryBuffer = d.get(RETRY_BUFFER_SIZE);
            if (required(values, PER_RPC_BUFFER_LIMIT, Long.class) > required(values, RETRY_BUFFER_SIZE, Long.class)
                    && (perRpc != null || retryBuffer != null)) {
                v.warnings().add(place(perRpc, d.path() + ".per-rpc-buffer-limit", "1MB") + " is above "
                        + place(retryBuffer, d.path() + ".retry-buffer-size", "16MB") + ": a call is committed (no"
                        + " more retries) once the channel's retry buffer is full, so the per-call limit never takes effect;"
                        + " lower per-rpc-buffer-limit or raise retry-buffer-size");
            }
            Double ratio = optional(values, BUDGET_RATIO, Double.class);
            ChannelRetryConfig config = new ChannelRetryConfig(d.channel(), ServiceConfig.EMPTY,
                    required(values, MAX_ATTEMPTS_CAP, Integer.class), required(values, PER_RPC_BUFFER_LIMIT, Long.class),
                    required(values, RETRY_BUFFER_SIZE, Long.class),
                    ratio == null ? null : new RetryBudgetPolicy(ratio,
                            required(values, BUDGET_MIN_RETRIES_PER_SECOND, Double.class),
                            required(values, BUDGET_TTL, Duration.class)),
                    optional(values, CONNECT_TIMEOUT, Duration.class), optional(values, RESILIENCE4J_RETRY, String.class),
                    required(values, RETRY_INFO, Boolean.class), required(values, RETRY_INFO_MAX_DELAY, Duration.class),
                    !required(values, ADAPTIVE_HEDGING_ENABLED, Boolean.class) ? null : new AdaptiveHedgingPolicy(
                            required(values, ADAPTIVE_HEDGING_MAX_EXTRA_LOAD, Double.class),
                            required(values, ADAPTIVE_HEDGING_MIN_DELAY, Duration.class),
                            optional(values, ADAPTIVE_HEDGING_MAX_DELAY, Duration.class),
                            required(values, ADAPTIVE_HEDGING_MIN_SAMPLES, Integer.class),
                            required(values, ADAPTIVE_HEDGING_WINDOW, Duration.class)),
                    required(values, AVOID_TRIED_BACKENDS, Boolean.class), required(values, BACKEND_PICKS, Integer.class),
                    new ChannelRetryConfig.Streams(optional(values, STREAMS_IDLE_TIMEOUT, Duration.class),
                            required(values, STREAMS_MAX_RESUMES, Integer.class)));
            Sourced<?> cap = d.get(MAX_ATTEMPTS_CAP);
            return new ChannelDraft.Settings(config, cap == null ? "the default" : cap.path());
        }

        private static <T> T required(Map<ChannelField, Object> values, ChannelField field, Class<T> type) {
            return type.cast(Objects.requireNonNull(values.get(field), field.propertyName));
        }

        private static <T> @Nullable T optional(Map<ChannelField, Object> values, ChannelField field, Class<T> type) {
            return type.cast(values.get(field));
        }

        /** The field's value in {@code properties} with its path under {@code channelPath}; null when not set. */
        @Nullable Sourced<?> sourced(ClientProperties properties, String channelPath) {
            Object value = value(properties);
            String path = channelPath + "." + propertyName;
            if (value instanceof Size size) {
                return new Sourced<>(size.bytes(), path, size.display());
            }
            return Sourced.of(value, path);
        }

        /**
         * Checks a value that is set against the field's rule, reporting a problem to {@code v} at its path; returns
         * the validated value, or null when it is invalid (the default then stands in). By default every value is
         * valid.
         *
         * @param earlier the values of the fields before this one in the table, validated or at their default
         */
        @Nullable Object check(Sourced<?> s, Map<ChannelField, Object> earlier, RetryConfigValidator v) {
            return s.value();
        }

        /**
         * The value of {@code s} when {@code valid}; else null, with the problem "{@code <property name> <rule>}"
         * reported at its path.
         */
        @Nullable Object valid(Sourced<?> s, RetryConfigValidator v, boolean valid, String rule, String fix) {
            if (!valid) {
                v.problem(s.path(), s.display(), propertyName + " " + rule, fix);
                return null;
            }
            return s.value();
        }

        /** A duration that must be &gt; 0. */
        @Nullable Object positive(Sourced<?> s, RetryConfigValidator v, String fix) {
            Duration d = (Duration) s.value();
            return valid(s, v, !d.isNegative() && !d.isZero(), "must be > 0", fix);
        }

        /** {@code path = value} of a set value, or {@code path = default (the default)}. */
        private static String place(@Nullable Sourced<?> s, String path, String dflt) {
            return s == null ? path + " = " + dflt + " (the default)" : s.path() + " = " + s.display();
        }
    }

    /** The groups of channel-wide settings only the interceptor engine applies: one native-engine warning each. */
    enum InterceptorOnly {
        RETRY_INFO("retry-info is ignored: grpc.retry.engine=native (grpc-java's own retry) reads only the "
                + "grpc-retry-pushback-ms trailer, never a google.rpc.RetryInfo delay"),
        ADAPTIVE_HEDGING("adaptive-hedging is ignored: grpc.retry.engine=native (grpc-java's own retry) hedges after the"
                + " fixed hedging.delay only"),
        BUDGET("budget is ignored: grpc.retry.engine=native (grpc-java's own retry) limits retries only by"
                + " retrythrottling and max-attempts-cap, never by a retry budget"),
        TRIED_BACKENDS("avoid-tried-backends is ignored: grpc.retry.engine=native (grpc-java's own retry) picks a backend"
                + " for each attempt without knowing where the call's earlier attempts went"),
        STREAMS("streams is ignored: grpc.retry.engine=native (grpc-java's own retry) neither cancels an idle streaming"
                + " attempt nor resumes a stream after its commit");

        private final String ignored;

        InterceptorOnly(String ignored) {
            this.ignored = ignored;
        }

        String warning(List<String> places) {
            return ignored + ". Set at: " + String.join(", ", places)
                    + ". Use grpc.retry.engine=interceptor to have it applied, or remove it";
        }
    }

    // ------------------------------------------------------------------ the property tree

    /**
     * {@code grpc.retry.clients.<channel>}: every field may be unset (null).
     *
     * @param serviceConfigFile the file {@code service-config-file} names, already read (or why it
     *     could not be)
     */
    public record ClientProperties(
            @Nullable ServiceConfigProperties serviceConfig,
            @Nullable ServiceConfigFile serviceConfigFile,
            @Nullable BudgetProperties budget,
            @Nullable Integer maxAttemptsCap,
            @Nullable Size perRpcBufferLimit,
            @Nullable Size retryBufferSize,
            @Nullable Duration connectTimeout,
            @Nullable String resilience4jRetry,
            @Nullable Boolean retryInfo,
            @Nullable Duration retryInfoMaxDelay,
            @Nullable AdaptiveHedgingProperties adaptiveHedging,
            @Nullable Boolean avoidTriedBackends,
            @Nullable Integer backendPicks,
            @Nullable StreamsProperties streams) {

        /** Nothing set. */
        public static final ClientProperties NONE = new ClientProperties(null, null, null, null, null, null, null, null,
                null, null, null, null, null, null);
    }

    /** {@code service-config}: the method entries and {@code retrythrottling}. */
    public record ServiceConfigProperties(@Nullable List<@Nullable MethodProperties> method,
            @Nullable RetryThrottlingProperties retrythrottling) {
    }

    /** {@code service-config.method[i]}. */
    public record MethodProperties(
            @Nullable List<@Nullable NameProperties> name,
            @Nullable Boolean waitForReady,
            @Nullable Duration timeout,
            @Nullable Size maxRequestMessage,
            @Nullable Size maxResponseMessage,
            @Nullable RetryProperties retry,
            @Nullable HedgingProperties hedging) {
    }

    /** {@code service-config.method[i].name[j]}: a null service matches every service, a null method every method. */
    public record NameProperties(@Nullable String service, @Nullable String method) {
    }

    /**
     * {@code service-config.method[i].retry}: one component per field of the retry-policy field table, each may
     * be unset (null). Status codes are kept as written (names or numbers), checked with the policy.
     */
    public record RetryProperties(
            @Nullable Integer maxAttempts,
            @Nullable Duration initialBackoff,
            @Nullable Duration maxBackoff,
            @Nullable Double backoffMultiplier,
            @Nullable List<String> retryableStatusCodes,
            @Nullable Duration perAttemptReceiveTimeout) {

        public RetryProperties {
            retryableStatusCodes = retryableStatusCodes == null ? null : List.copyOf(retryableStatusCodes);
        }

        /**
         * A retry policy from bound values: a {@code Float} multiplier is taken as the decimal written (0.1 rather
         * than 0.10000000149), status codes as a collection of {@code Status.Code} or of names.
         */
        public static RetryProperties of(@Nullable Integer maxAttempts, @Nullable Duration initialBackoff,
                @Nullable Duration maxBackoff, @Nullable Number backoffMultiplier,
                @Nullable Collection<?> retryableStatusCodes, @Nullable Duration perAttemptReceiveTimeout) {
            return new RetryProperties(maxAttempts, initialBackoff, maxBackoff, decimal(backoffMultiplier),
                    codeNames(retryableStatusCodes), perAttemptReceiveTimeout);
        }

        @SuppressWarnings("unchecked")
        private static @Nullable List<String> codeNames(@Nullable Collection<?> codes) {
            return codes == null ? null : (List<String>) RetryPolicyField.Kind.CODES.fromProperty(codes);
        }
    }

    /** {@code service-config.method[i].hedging}. */
    public record HedgingProperties(@Nullable Integer maxAttempts, @Nullable Duration delay,
            @Nullable List<String> nonFatalStatusCodes) {
    }

    /** {@code service-config.retrythrottling}. */
    public record RetryThrottlingProperties(@Nullable Double maxTokens, @Nullable Double tokenRatio) {

        /** Retry throttling from bound numbers (a {@code Float} taken as the decimal written). */
        public static RetryThrottlingProperties of(@Nullable Number maxTokens, @Nullable Number tokenRatio) {
            return new RetryThrottlingProperties(decimal(maxTokens), decimal(tokenRatio));
        }
    }

    /** {@code grpc.retry.clients.<channel>.adaptive-hedging}: every field may be unset (null). */
    public record AdaptiveHedgingProperties(@Nullable Boolean enabled, @Nullable Double maxExtraLoad,
            @Nullable Duration minDelay, @Nullable Duration maxDelay, @Nullable Integer minSamples,
            @Nullable Duration window) {
    }

    /** {@code grpc.retry.clients.<channel>.budget}: every field may be unset (null). */
    public record BudgetProperties(@Nullable Double ratio, @Nullable Double minRetriesPerSecond, @Nullable Duration ttl) {
    }

    /** {@code grpc.retry.clients.<channel>.streams}: every field may be unset (null). */
    public record StreamsProperties(@Nullable Duration idleTimeout, @Nullable Integer maxResumes) {
    }

    /** A bound number as a {@code Double}: a {@code Float} as the decimal written (0.1 rather than 0.10000000149). */
    private static @Nullable Double decimal(@Nullable Number n) {
        return n == null ? null : (Double) RetryPolicyField.Kind.NUMBER.fromProperty(n);
    }

    /**
     * A size property: its value in bytes and as the user wrote it ({@code 4MB}).
     */
    public record Size(long bytes, String display) {

        public Size {
            Objects.requireNonNull(display, "display");
        }
    }

    /**
     * The file {@code service-config-file} names.
     *
     * @param name how to name it in problems ({@code classpath:sc.json}, {@code file:/etc/sc.json})
     * @param text its content, or null when it could not be read
     * @param problem when {@code text} is null: why ("the service config file does not exist")
     * @param fix when {@code text} is null: what to do about it
     */
    public record ServiceConfigFile(String name, @Nullable String text, @Nullable String problem, @Nullable String fix) {

        /** The largest service-config file read: 1MB (1048576 bytes); a larger one is a start-up error. */
        public static final int MAX_BYTES = 1024 * 1024;

        public ServiceConfigFile {
            Objects.requireNonNull(name, "name");
        }

        /** A file that was read. */
        public static ServiceConfigFile of(String name, String text) {
            return new ServiceConfigFile(name, Objects.requireNonNull(text, "text"), null, null);
        }

        /** A file that could not be read, and why. */
        public static ServiceConfigFile unreadable(String name, String problem, String fix) {
            return new ServiceConfigFile(name, null, problem, fix);
        }

        /**
         * Reads a file as UTF-8; one that does not exist or fails to read becomes {@link #unreadable}
         * with the problem and the fix the start-up report shows (the same on every Spring Boot line).
         *
         * @param exists whether the file exists (the framework's resource says)
         * @param open opens it
         */
        public static ServiceConfigFile read(String name, boolean exists, Opener open) {
            if (!exists) {
                return unreadable(name, "the service config file does not exist",
                        "point it to an existing file, e.g. classpath:service-config.json or file:/etc/app/service-config.json");
            }
            try (InputStream in = open.open()) {
                byte[] bytes = in.readNBytes(MAX_BYTES + 1);
                if (bytes.length > MAX_BYTES) {
                    return unreadable(name, "the service config file is larger than " + MAX_BYTES + " bytes (1MB), the"
                            + " limit of a service-config file; it was not read further",
                            "point it to the service-config JSON (a gRPC service config takes a few kilobytes)");
                }
                return of(name, new String(bytes, StandardCharsets.UTF_8));
            } catch (IOException | RuntimeException e) {
                return unreadable(name, "the service config file cannot be read: " + e.getMessage(),
                        "make the file readable by the application");
            }
        }

        /** Opens a service-config file, e.g. a Spring {@code Resource}'s {@code getInputStream}. */
        @FunctionalInterface
        public interface Opener {
            InputStream open() throws IOException;
        }
    }
}
