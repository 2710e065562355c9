package io.github.grpcretry.config;

import io.github.grpcretry.internal.config.ChannelDraft;
import io.github.grpcretry.internal.config.ChannelNames;
import io.github.grpcretry.internal.config.ConfigNaming;
import io.github.grpcretry.internal.config.HedgingPolicyDraft;
import io.github.grpcretry.internal.config.MethodConfigDraft;
import io.github.grpcretry.internal.config.ResolvedChannelRetryConfigs;
import io.github.grpcretry.internal.config.RetryPolicyDraft;
import io.github.grpcretry.internal.config.RetryPolicyField;
import io.github.grpcretry.internal.config.RetryThrottlingDraft;
import io.github.grpcretry.internal.config.ServiceConfigDraft;
import io.github.grpcretry.internal.config.ServiceConfigJson;
import io.github.grpcretry.internal.config.Sourced;
import io.github.grpcretry.internal.config.StatusCodes;
import io.github.grpcretry.internal.time.Durations;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.policy.ServiceConfigCustomizer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
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
                RetryPolicyDraft r = m.retryPolicy();
                Sourced<Object> timeout = r == null ? null : r.get(RetryPolicyField.PER_ATTEMPT_RECEIVE_TIMEOUT);
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
     * The start-up warnings for the native engine with settings only the interceptor engine applies: one for
     * {@code retry-info}/{@code retry-info-max-delay} (grpc-java reads only {@code grpc-retry-pushback-ms}), one for
     * {@code adaptive-hedging.*} (grpc-java's hedging delay is fixed), one for {@code budget.*} (grpc-java has no
     * retry budget), one for {@code avoid-tried-backends}/{@code backend-picks} (grpc-java's picks do not know the
     * call's earlier attempts), each naming every property that sets one.
     */
    static List<String> nativeIgnoresInterceptorOnlySettings(Map<String, ChannelDraft> drafts) {
        List<String> retryInfo = new ArrayList<>();
        List<String> adaptive = new ArrayList<>();
        List<String> budget = new ArrayList<>();
        List<String> backends = new ArrayList<>();
        for (ChannelDraft d : drafts.values()) {
            for (Sourced<?> s : Arrays.asList(d.avoidTriedBackends(), d.backendPicks())) {
                if (s != null) {
                    backends.add(s.path() + " = " + s.display());
                }
            }
            for (Sourced<?> s : Arrays.asList(d.retryInfo(), d.retryInfoMaxDelay())) {
                if (s != null) {
                    retryInfo.add(s.path() + " = " + s.display());
                }
            }
            adaptive.addAll(d.adaptiveHedging().setPlaces());
            for (Sourced<?> s : Arrays.asList(d.budgetRatio(), d.budgetMinRetriesPerSecond(), d.budgetTtl())) {
                if (s != null) {
                    budget.add(s.path() + " = " + s.display());
                }
            }
        }
        List<String> out = new ArrayList<>(4);
        if (!retryInfo.isEmpty()) {
            out.add("retry-info is ignored: grpc.retry.engine=native (grpc-java's own retry) reads only the "
                    + "grpc-retry-pushback-ms trailer, never a google.rpc.RetryInfo delay. Set at: "
                    + String.join(", ", retryInfo) + ". Use grpc.retry.engine=interceptor to have it applied, or remove it");
        }
        if (!adaptive.isEmpty()) {
            out.add("adaptive-hedging is ignored: grpc.retry.engine=native (grpc-java's own retry) hedges after the fixed "
                    + "hedging.delay only. Set at: " + String.join(", ", adaptive)
                    + ". Use grpc.retry.engine=interceptor to have it applied, or remove it");
        }
        if (!budget.isEmpty()) {
            out.add("budget is ignored: grpc.retry.engine=native (grpc-java's own retry) limits retries only by"
                    + " retrythrottling and max-attempts-cap, never by a retry budget. Set at: " + String.join(", ", budget)
                    + ". Use grpc.retry.engine=interceptor to have it applied, or remove it");
        }
        if (!backends.isEmpty()) {
            out.add("avoid-tried-backends is ignored: grpc.retry.engine=native (grpc-java's own retry) picks a backend"
                    + " for each attempt without knowing where the call's earlier attempts went. Set at: "
                    + String.join(", ", backends) + ". Use grpc.retry.engine=interceptor to have it applied, or remove it");
        }
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
        ServiceConfigDraft merged = typed.overlay(file);
        BudgetProperties b = c.budget() == null ? BudgetProperties.NONE : c.budget();
        String bp = path + ".budget";
        return new ChannelDraft(channel, path, merged,
                Sourced.of(b.ratio(), bp + ".ratio"),
                Sourced.of(b.minRetriesPerSecond(), bp + ".min-retries-per-second"),
                Sourced.of(b.ttl(), bp + ".ttl"),
                Sourced.of(c.maxAttemptsCap(), path + ".max-attempts-cap"),
                bytes(c.perRpcBufferLimit(), path + ".per-rpc-buffer-limit"),
                bytes(c.retryBufferSize(), path + ".retry-buffer-size"),
                Sourced.of(c.connectTimeout(), path + ".connect-timeout"),
                Sourced.of(c.resilience4jRetry(), path + ".resilience4j-retry"),
                Sourced.of(c.retryInfo(), path + ".retry-info"),
                Sourced.of(c.retryInfoMaxDelay(), path + ".retry-info-max-delay"),
                adaptiveHedging(c.adaptiveHedging(), path + ".adaptive-hedging"),
                Sourced.of(c.avoidTriedBackends(), path + ".avoid-tried-backends"),
                Sourced.of(c.backendPicks(), path + ".backend-picks"));
    }

    private static ChannelDraft.AdaptiveHedgingDraft adaptiveHedging(@Nullable AdaptiveHedgingProperties a, String path) {
        if (a == null) {
            return ChannelDraft.AdaptiveHedgingDraft.EMPTY;
        }
        return new ChannelDraft.AdaptiveHedgingDraft(Sourced.of(a.enabled(), path + ".enabled"),
                Sourced.of(a.maxExtraLoad(), path + ".max-extra-load"), Sourced.of(a.minDelay(), path + ".min-delay"),
                Sourced.of(a.maxDelay(), path + ".max-delay"), Sourced.of(a.minSamples(), path + ".min-samples"),
                Sourced.of(a.window(), path + ".window"));
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
        RetryPolicyDraft retry = null;
        RetryProperties r = m.retry();
        if (r != null) {
            String rp = path + ".retry";
            Map<RetryPolicyField, Sourced<?>> values = new EnumMap<>(RetryPolicyField.class);
            for (RetryPolicyField f : RetryPolicyField.values()) {
                Sourced<?> v = Sourced.of(r.get(f.propertyName()), rp + "." + f.propertyName());
                if (v != null) {
                    values.put(f, v);
                }
            }
            retry = new RetryPolicyDraft(rp, ConfigNaming.PROPERTIES, values);
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

    private static @Nullable Sourced<List<String>> codes(@Nullable List<String> codes, String path) {
        return codes == null ? null : new Sourced<>(List.copyOf(codes), path, codes.toString());
    }

    private static @Nullable Sourced<Long> bytes(@Nullable Size size, String path) {
        return size == null ? null : new Sourced<>(size.bytes(), path, size.display());
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
            @Nullable Integer backendPicks) {
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
     * {@code service-config.method[i].retry}: the fields that are set, keyed by property name
     * ({@code max-attempts}, ...: the property names of the retry-policy field table). Values
     * are kept in the field's type: a whole number as {@code Integer}, a number as {@code Double} (a
     * {@code Float} as the decimal written), a {@code Duration}, status codes as a list of names (a
     * collection of {@code Status.Code} or of strings as written).
     */
    public record RetryProperties(Map<String, Object> values) {

        public RetryProperties {
            Map<String, Object> checked = new LinkedHashMap<>();
            for (Map.Entry<String, Object> e : values.entrySet()) {
                RetryPolicyField f = RetryPolicyField.byPropertyName(e.getKey());
                if (f == null) {
                    List<String> known = new ArrayList<>();
                    for (RetryPolicyField k : RetryPolicyField.values()) {
                        known.add(k.propertyName());
                    }
                    throw new IllegalArgumentException("no retry property " + e.getKey() + "; the retry properties are " + known);
                }
                if (e.getValue() != null) {
                    checked.put(f.propertyName(), f.kind().fromProperty(e.getValue()));
                }
            }
            values = Collections.unmodifiableMap(checked);
        }

        /**
         * A retry policy: one value per field of the retry-policy field table (a {@code Float} multiplier is
         * taken as the decimal written; status codes as a collection of {@code Status.Code} or of names).
         */
        public static RetryProperties of(@Nullable Integer maxAttempts, @Nullable Duration initialBackoff,
                @Nullable Duration maxBackoff, @Nullable Number backoffMultiplier,
                @Nullable Collection<?> retryableStatusCodes, @Nullable Duration perAttemptReceiveTimeout) {
            Map<String, @Nullable Object> set = new LinkedHashMap<>();
            set.put(RetryPolicyField.MAX_ATTEMPTS.propertyName(), maxAttempts);
            set.put(RetryPolicyField.INITIAL_BACKOFF.propertyName(), initialBackoff);
            set.put(RetryPolicyField.MAX_BACKOFF.propertyName(), maxBackoff);
            set.put(RetryPolicyField.BACKOFF_MULTIPLIER.propertyName(), backoffMultiplier);
            set.put(RetryPolicyField.RETRYABLE_STATUS_CODES.propertyName(), retryableStatusCodes);
            set.put(RetryPolicyField.PER_ATTEMPT_RECEIVE_TIMEOUT.propertyName(), perAttemptReceiveTimeout);
            return of(set);
        }

        /** The fields given, by property name; null values count as not set. */
        public static RetryProperties of(Map<String, ? extends @Nullable Object> values) {
            Map<String, Object> copy = new LinkedHashMap<>();
            values.forEach((k, v) -> {
                if (v != null) {
                    copy.put(k, v);
                }
            });
            return new RetryProperties(copy);
        }

        /** The value of the property {@code propertyName} ({@code max-attempts}); null when not set. */
        public @Nullable Object get(String propertyName) {
            return values.get(propertyName);
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

        private static @Nullable Double decimal(@Nullable Number n) {
            return n == null ? null : (Double) RetryPolicyField.Kind.NUMBER.fromProperty(n);
        }
    }

    /** {@code budget}. */
    /** {@code grpc.retry.clients.<channel>.adaptive-hedging}: every field may be unset (null). */
    public record AdaptiveHedgingProperties(@Nullable Boolean enabled, @Nullable Double maxExtraLoad,
            @Nullable Duration minDelay, @Nullable Duration maxDelay, @Nullable Integer minSamples,
            @Nullable Duration window) {
    }

    public record BudgetProperties(@Nullable Double ratio, @Nullable Double minRetriesPerSecond, @Nullable Duration ttl) {

        static final BudgetProperties NONE = new BudgetProperties(null, null, null);
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
