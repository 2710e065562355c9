package io.github.grpcretry.spring.reload;

import io.github.grpcretry.config.RetryConfigResolver;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.spring.channel.ChannelSetup;
import io.grpc.ManagedChannelBuilder;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import io.grpc.Status;
import io.grpc.Uri;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.SocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Where the retry policy of each channel comes from, and what becomes of a service config that the
 * channel's name resolver supplies (DNS TXT records, a discovery resolver's instance metadata, a custom
 * resolver). grpc-java uses a resolver's service config instead of the channel's default one, whole;
 * this class puts itself between the resolver and grpc-java's parser, and between the resolver and the
 * channel's listener, per channel. On both engines the channel's own entry for a method name wins, the
 * resolver's policies run for the names the channel does not configure, and its retry throttling when the
 * channel has none; the resolver's latest answer counts (a new service config replaces the one before):
 * <ul>
 *   <li>interceptor engine: the engine runs them. grpc-java gets the resolver's config without its retry
 *       parts (its load balancing and the rest stay; the channel's own method entries, without retry parts,
 *       are laid over it), so it never retries underneath the engine's attempts; the retry parts go to the
 *       channel's configuration ({@code ReloadableChannels.resolverServiceConfig}) with every answer, and
 *       the channel's calls wait for the resolver's first answer ({@code ReloadableChannels.awaitResolver}),
 *       as grpc-java's own calls do;</li>
 *   <li>native engine: grpc-java runs them: the channel's own method configs and throttling are laid over
 *       the resolver's config.</li>
 * </ul>
 * One WARN per channel (and per change of what the resolver supplies) says what happens. It is installed
 * with the resolver of the channel's target wrapped ({@code nameResolverFactory}), so it does not apply to
 * channels with a direct address (in-process by name, {@code forAddress}: they have no resolver) or whose
 * builder is given another resolver factory afterwards. Whatever the resolver says, the interceptor engine's
 * channels also get grpc-java's caps of 1 ({@link ChannelSetup#capUnderlyingRetries}), which switches off
 * policies that bypass the parser (xDS routes: one WARN per {@code xds:} channel). The endpoint shows both
 * per channel ({@link #report}). docs/spring-boot-4.md describes the behaviour on both engines, docs/design.md
 * the route.
 */
public final class PolicySources {

    /** The channel's grpc.retry properties (its service-config-file included). */
    public static final String YAML = "yaml";
    /** Spring Boot 4's spring.grpc.client.channel.&lt;name&gt;.service-config. */
    public static final String BOOT_SERVICE_CONFIG = "boot-service-config";
    /** The service config the channel's name resolver supplied. */
    public static final String RESOLVER = "resolver";

    private static final System.Logger LOG = System.getLogger(PolicySources.class.getName());

    private final ChannelSetup.Engine engine;
    private final Function<String, Set<String>> configured;
    private final Consumer<String> warnings;
    private final @Nullable ReloadableChannels channels;
    private final Map<String, ResolverOutcome> resolved = new ConcurrentHashMap<>();
    private final Set<String> xdsWarned = ConcurrentHashMap.newKeySet();

    /** What a channel's resolver supplied and what was done with it (a WARN when it first supplies a policy, and when that changes). */
    private record ResolverOutcome(String supplied, String outcome, boolean resolverPolicyRuns) {
    }

    /**
     * @param configured the sources ({@link #YAML}, {@link #BOOT_SERVICE_CONFIG}) of the policies a channel's
     *     configuration holds
     * @param warnings receives the one warning per channel whose resolver supplies a policy
     */
    public PolicySources(ChannelSetup.Engine engine, Function<String, Set<String>> configured, Consumer<String> warnings) {
        this(engine, configured, warnings, null);
    }

    /**
     * @param channels the channels' configuration the interceptor engine runs, which receives the retry parts
     *     of what each channel's resolver supplies; absent = the interceptor engine runs no resolver's policy
     */
    public PolicySources(ChannelSetup.Engine engine, Function<String, Set<String>> configured, Consumer<String> warnings,
            @Nullable ReloadableChannels channels) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.configured = Objects.requireNonNull(configured, "configured");
        this.warnings = Objects.requireNonNull(warnings, "warnings");
        this.channels = channels;
    }

    /**
     * Puts the resolver's service config under this class's control for the channel built by
     * {@code builder}; the channel's configuration is read when the resolver first delivers a config. With the
     * interceptor engine an {@code xds:} target gets one WARN per channel: an xDS route's retry policy reaches
     * grpc-java below every interceptor, where the engine's cap switches it off.
     *
     * @param config the channel's own configuration (without what its resolver supplied)
     * @return whether it was installed (false for a builder with a direct address, or whose target's
     *     scheme no resolver serves)
     */
    public boolean install(ManagedChannelBuilder<?> builder, String channel, Supplier<ChannelRetryConfig> config) {
        String target = target(builder);
        if (target == null) {
            return false;
        }
        if (engine == ChannelSetup.Engine.INTERCEPTOR && target.startsWith("xds:") && xdsWarned.add(channel)) {
            warnings.accept("Channel " + channel + " (" + target + "): the retry and hedging policies of its xDS routes"
                    + " reach grpc-java below every interceptor, and the interceptor engine caps grpc-java at one"
                    + " attempt, so they do not run; set grpc.retry.engine=native to run them (see docs/spring-boot-4.md)");
        }
        NameResolverProvider provider = providerFor(target, NameResolverRegistry.getDefaultRegistry());
        if (provider == null) {
            return false;
        }
        try {
            setFactory(builder, new Provider(provider, channel, config, ChannelSetup.defaultPolicy(builder)));
            return true;
        } catch (IllegalStateException | UnsupportedOperationException e) {
            LOG.log(System.Logger.Level.DEBUG, "resolver service config of {0} not watched: {1}", channel, e.toString());
            return false;
        }
    }

    @SuppressWarnings("deprecation") // the one per-channel hook into the resolver's arguments
    private static void setFactory(ManagedChannelBuilder<?> builder, NameResolver.Factory factory) {
        builder.nameResolverFactory(factory);
    }

    /**
     * The endpoint's {@code policy} entry of a channel: {@code sources} (where the policies that run
     * come from: {@link #YAML}, {@link #BOOT_SERVICE_CONFIG}, {@link #RESOLVER}) and, once the channel's
     * resolver supplied a service config with a policy, {@code resolverServiceConfig} (what it supplied
     * and what was done with it).
     */
    public Map<String, Object> report(String channel) {
        Map<String, Object> out = new LinkedHashMap<>();
        Set<String> sources = new LinkedHashSet<>(configured.apply(channel));
        ResolverOutcome r = resolved.get(channel);
        if (r != null && r.resolverPolicyRuns()) {
            sources.add(RESOLVER);
        }
        out.put("sources", List.copyOf(sources));
        if (r != null) {
            Map<String, Object> resolver = new LinkedHashMap<>();
            resolver.put("supplied", r.supplied());
            resolver.put("outcome", r.outcome());
            out.put("resolverServiceConfig", resolver);
        }
        return out;
    }

    /**
     * The service config the resolver hands over, as grpc-java is to parse it for the channel's engine; with
     * the interceptor engine also the retry parts the engine is to run ({@link Adjusted#forEngine}).
     */
    Adjusted adjust(String channel, Map<String, ?> raw, ChannelRetryConfig config) {
        String supplied = retryParts(raw);
        if (supplied == null) {
            resolved.computeIfPresent(channel, (c, before) -> new ResolverOutcome(NOTHING, "the channel runs its own"
                    + " policies only", false));
            return new Adjusted(raw, null);
        }
        Map<String, Object> own = ChannelSetup.serviceConfigMap(config, engine);
        if (engine == ChannelSetup.Engine.INTERCEPTOR) {
            Map<String, Object> stripped = ChannelSetup.withoutRetry(raw);
            // The channel's own wait-for-ready, timeouts and message limits, as its default config has them.
            Map<String, ?> forGrpc = own.isEmpty() ? stripped : merge(stripped, own).config();
            ServiceConfig forEngine;
            try {
                forEngine = RetryConfigResolver.readServiceConfig(retryOnly(raw), "the service config of channel " + channel
                        + "'s name resolver");
            } catch (InvalidRetryConfigurationException e) {
                record(channel, supplied, "ignored: " + e.getMessage(), false);
                return new Adjusted(forGrpc, ServiceConfig.EMPTY);
            }
            if (channels == null) {
                record(channel, supplied, "dropped: the interceptor engine runs the channel's own policies and grpc-java"
                        + " never retries or hedges underneath them", false);
                return new Adjusted(forGrpc, null);
            }
            ChannelRetryConfig layered = layered(config, forEngine);
            boolean runs = !layered.serviceConfig().equals(config.serviceConfig());
            record(channel, supplied, !runs
                    ? "not run: the channel's own method configs and retry throttling cover everything it names"
                    : ownHasPolicy(config) ? "run by the engine: the channel's own method configs and retry throttling win"
                            + " for what they name; the resolver's policies run for the other methods"
                    : "run by the engine: the channel configures no policy of its own", runs);
            return new Adjusted(forGrpc, forEngine);
        }
        if (own.isEmpty()) {
            record(channel, supplied, "used: the channel configures no policy of its own", true);
            return new Adjusted(raw, null);
        }
        Merged merged = merge(raw, own);
        record(channel, supplied, "merged: the channel's own method configs and retry throttling were laid over it"
                + (merged.resolverPolicyKept() ? "; the resolver's policies for other methods stay" : ""),
                merged.resolverPolicyKept());
        return new Adjusted(merged.config(), null);
    }

    /** What the resolver supplied when its latest service config has no policy. */
    private static final String NOTHING = "no retry policy, hedging policy or retry throttling";

    /**
     * @param forGrpc the service config grpc-java parses
     * @param forEngine the retry parts the interceptor engine runs; absent = none for it
     */
    record Adjusted(Map<String, ?> forGrpc, @Nullable ServiceConfig forEngine) {
    }

    /** The resolver's latest answer had no service config: grpc-java runs the channel's own default config. */
    private void answeredWithoutConfig(String channel, @Nullable ReloadableChannels engineChannels) {
        resolved.computeIfPresent(channel, (c, before) -> new ResolverOutcome(NOTHING, "its latest answer has no service"
                + " config: the channel runs its own policies only", false));
        if (engineChannels != null) {
            engineChannels.resolverServiceConfig(channel, null);
        }
    }

    /**
     * {@code own} with the resolver's retry and hedging policies for the method names {@code own} has no entry
     * for (an entry of {@code own} for a name wins, whatever it holds; {@link ChannelRetryConfig} caps their
     * attempts at {@code own}'s cap), and the resolver's retry throttling when {@code own} has none: what the interceptor engine runs for
     * a channel whose name resolver supplied {@code resolver} (absent = nothing).
     */
    static ChannelRetryConfig layered(ChannelRetryConfig own, @Nullable ServiceConfig resolver) {
        if (resolver == null) {
            return own;
        }
        ServiceConfig sc = own.serviceConfig();
        Set<MethodName> ownNames = new LinkedHashSet<>();
        sc.methodConfigs().forEach(m -> ownNames.addAll(m.names()));
        List<MethodConfig> methods = new ArrayList<>(sc.methodConfigs());
        for (MethodConfig m : resolver.methodConfigs()) {
            List<MethodName> names = new ArrayList<>(m.names());
            names.removeAll(ownNames);
            if (!names.isEmpty() && (m.retryPolicy() != null || m.hedgingPolicy() != null)) {
                methods.add(new MethodConfig(names, null, null, null, null, m.retryPolicy(), m.hedgingPolicy()));
            }
        }
        ServiceConfig out = new ServiceConfig(methods,
                sc.retryThrottling() != null ? sc.retryThrottling() : resolver.retryThrottling());
        if (out.equals(sc)) {
            return own;
        }
        return own.withServiceConfig(own.channel(), out);
    }

    private static boolean ownHasPolicy(ChannelRetryConfig config) {
        return config.serviceConfig().retryThrottling() != null || config.serviceConfig().methodConfigs().stream()
                .anyMatch(m -> m.retryPolicy() != null || m.hedgingPolicy() != null);
    }

    /** The retry parts of a service config map: each method entry's names and policies, and the throttling. */
    private static Map<String, Object> retryOnly(Map<String, ?> raw) {
        Map<String, Object> out = new LinkedHashMap<>();
        List<Object> methods = new ArrayList<>();
        for (Object entry : list(raw.get("methodConfig"))) {
            if (entry instanceof Map<?, ?> m && (m.get("retryPolicy") != null || m.get("hedgingPolicy") != null)) {
                Map<Object, Object> copy = new LinkedHashMap<>();
                for (String key : List.of("name", "retryPolicy", "hedgingPolicy")) {
                    if (m.get(key) != null) {
                        copy.put(key, m.get(key));
                    }
                }
                methods.add(copy);
            }
        }
        if (!methods.isEmpty()) {
            out.put("methodConfig", methods);
        }
        if (raw.get("retryThrottling") != null) {
            out.put("retryThrottling", raw.get("retryThrottling"));
        }
        return out;
    }

    private void record(String channel, String supplied, String outcome, boolean runs) {
        ResolverOutcome previous = resolved.put(channel, new ResolverOutcome(supplied, outcome, runs));
        if (previous == null || !previous.supplied().equals(supplied)) {
            warnings.accept("Channel " + channel + ": its name resolver supplied a service config with " + supplied
                    + "; " + outcome + " (grpc.retry.engine=" + engine.propertyValue()
                    + ", see docs/spring-boot-4.md)");
        }
    }

    private record Merged(Map<String, Object> config, boolean resolverPolicyKept) {
    }

    /**
     * {@code raw} with {@code own}'s method configs and throttling laid over it: every own entry, then the
     * resolver's entries without the names an own entry has (an entry left with no name is dropped); own
     * throttling, else the resolver's; every other key of {@code raw} as it was.
     */
    private static Merged merge(Map<String, ?> raw, Map<String, Object> own) {
        Map<String, Object> out = new LinkedHashMap<>(raw);
        List<Object> methods = new ArrayList<>();
        Set<Object> ownNames = new LinkedHashSet<>();
        for (Object entry : list(own.get("methodConfig"))) {
            methods.add(entry);
            if (entry instanceof Map<?, ?> m) {
                ownNames.addAll(list(m.get("name")));
            }
        }
        boolean kept = false;
        for (Object entry : list(raw.get("methodConfig"))) {
            if (!(entry instanceof Map<?, ?> m)) {
                continue;
            }
            List<Object> names = new ArrayList<>(list(m.get("name")));
            names.removeIf(ownNames::contains);
            if (names.isEmpty()) {
                continue;
            }
            Map<Object, Object> copy = new LinkedHashMap<>(m);
            copy.put("name", names);
            methods.add(copy);
            kept |= copy.containsKey("retryPolicy") || copy.containsKey("hedgingPolicy");
        }
        out.put("methodConfig", methods);
        Object throttling = own.get("retryThrottling");
        if (throttling != null) {
            out.put("retryThrottling", throttling);
        }
        return new Merged(out, kept);
    }

    /** A short description of the retry parts of a service config map; null when it has none. */
    static @Nullable String retryParts(Map<String, ?> serviceConfig) {
        List<String> parts = new ArrayList<>();
        for (Object entry : list(serviceConfig.get("methodConfig"))) {
            if (entry instanceof Map<?, ?> m) {
                for (String policy : List.of("retryPolicy", "hedgingPolicy")) {
                    if (m.get(policy) != null) {
                        parts.add(policy + " " + m.get(policy) + " for " + m.get("name"));
                    }
                }
            }
        }
        if (serviceConfig.get("retryThrottling") != null) {
            parts.add("retryThrottling " + serviceConfig.get("retryThrottling"));
        }
        return parts.isEmpty() ? null : String.join(", ", parts);
    }

    private static List<?> list(@Nullable Object value) {
        return value instanceof List<?> l ? l : List.of();
    }

    /** The provider grpc-java picks for {@code target} from {@code registry}: its scheme's, else the default scheme's. */
    static @Nullable NameResolverProvider providerFor(String target, NameResolverRegistry registry) {
        try {
            String scheme = new URI(target).getScheme();
            if (scheme != null) {
                NameResolverProvider p = registry.getProviderForScheme(scheme);
                if (p != null) {
                    return p;
                }
            }
        } catch (URISyntaxException e) {
            // not a URI: grpc-java prefixes the default scheme, as below
        }
        return registry.getProviderForScheme(registry.getDefaultScheme());
    }

    /**
     * The target the builder will resolve, read from grpc-java's builder (through the delegates of
     * forwarding builders such as Netty's); null for a builder with a direct address or one whose target
     * cannot be read.
     */
    static @Nullable String target(ManagedChannelBuilder<?> builder) {
        Object b = builder;
        try {
            for (int depth = 0; depth < 4 && b != null; depth++) {
                Field target = field(b.getClass(), "target");
                Field direct = field(b.getClass(), "directServerAddress");
                if (target != null && direct != null && target.getType() == String.class) {
                    target.setAccessible(true);
                    direct.setAccessible(true);
                    return direct.get(b) != null ? null : (String) target.get(b);
                }
                Method delegate = method(b.getClass(), "delegate");
                if (delegate == null) {
                    return null;
                }
                delegate.setAccessible(true);
                b = delegate.invoke(b);
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "target of {0} not readable: {1}", builder.getClass().getName(), e.toString());
        }
        return null;
    }

    private static @Nullable Field field(Class<?> type, String name) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            try {
                return c.getDeclaredField(name);
            } catch (NoSuchFieldException e) {
                // look in the superclass
            }
        }
        return null;
    }

    private static @Nullable Method method(Class<?> type, String name) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            try {
                return c.getDeclaredMethod(name);
            } catch (NoSuchMethodException e) {
                // look in the superclass
            }
        }
        return null;
    }

    /**
     * The channel's parser: adjusts what the resolver supplied, then lets grpc-java parse it; keeps the retry
     * parts for the engine with what it returned, for the resolver's listener to hand over.
     */
    private final class Parser extends NameResolver.ServiceConfigParser {

        private final NameResolver.ServiceConfigParser delegate;
        private final String channel;
        private final Supplier<ChannelRetryConfig> config;
        private final @Nullable String defaultPolicy;
        private volatile @Nullable Parsed last;

        Parser(NameResolver.ServiceConfigParser delegate, String channel, Supplier<ChannelRetryConfig> config,
                @Nullable String defaultPolicy) {
            this.delegate = delegate;
            this.channel = channel;
            this.config = config;
            this.defaultPolicy = defaultPolicy;
        }

        @Override
        public NameResolver.ConfigOrError parseServiceConfig(Map<String, ?> rawServiceConfig) {
            Adjusted adjusted = adjust(channel, rawServiceConfig, config.get());
            // its load balancing (loadBalancingConfig, else the builder's default policy) under the starter's policy
            NameResolver.ConfigOrError parsed = delegate.parseServiceConfig(
                    ChannelSetup.withTriedBackends(adjusted.forGrpc(), engine, defaultPolicy));
            last = new Parsed(parsed, adjusted.forEngine());
            return parsed;
        }
    }

    /** What the channel's parser returned to the resolver, and the retry parts the engine is to run with it. */
    private record Parsed(NameResolver.ConfigOrError result, @Nullable ServiceConfig forEngine) {
    }

    /**
     * The resolver provider of the channel's target, unchanged except that the resolver it makes is given
     * the channel's parser and, with the interceptor engine, its answers are watched ({@link WatchedResolver}).
     * Available (the registry held it) with the delegate's scheme and address types.
     */
    private final class Provider extends NameResolverProvider {

        private final NameResolverProvider delegate;
        private final String channel;
        private final Supplier<ChannelRetryConfig> config;
        private final @Nullable String defaultPolicy;

        Provider(NameResolverProvider delegate, String channel, Supplier<ChannelRetryConfig> config,
                @Nullable String defaultPolicy) {
            this.delegate = delegate;
            this.channel = channel;
            this.config = config;
            this.defaultPolicy = defaultPolicy;
        }

        private @Nullable NameResolver watched(@Nullable NameResolver resolver, Parser parser) {
            if (resolver == null) {
                return null;
            }
            ReloadableChannels engineChannels = engine == ChannelSetup.Engine.INTERCEPTOR ? channels : null;
            if (engineChannels != null) {
                engineChannels.awaitResolver(channel);
            }
            return new WatchedResolver(resolver, parser, engineChannels);
        }

        @Override
        public @Nullable NameResolver newNameResolver(URI targetUri, NameResolver.Args args) {
            Parser parser = new Parser(args.getServiceConfigParser(), channel, config, defaultPolicy);
            return watched(delegate.newNameResolver(targetUri, args.toBuilder().setServiceConfigParser(parser).build()),
                    parser);
        }

        @Override
        public @Nullable NameResolver newNameResolver(Uri targetUri, NameResolver.Args args) {
            Parser parser = new Parser(args.getServiceConfigParser(), channel, config, defaultPolicy);
            return watched(delegate.newNameResolver(targetUri, args.toBuilder().setServiceConfigParser(parser).build()),
                    parser);
        }

        @Override
        public String getDefaultScheme() {
            return delegate.getDefaultScheme();
        }

        @Override
        public String getScheme() {
            return delegate.getScheme();
        }

        @Override
        protected boolean isAvailable() {
            return true;
        }

        @Override
        protected int priority() {
            return 5;
        }

        @Override
        public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
            return delegate.getProducedSocketAddressTypes();
        }
    }

    /**
     * The channel's resolver, unchanged except that each answer is also looked at once grpc-java took it: an
     * answer without a service config is reported (the channel runs its own policies again), and with the
     * interceptor engine the retry parts of its service config (none when it has none) go to the channel's
     * configuration, and the channel's waiting calls go on. An answer whose service config is an error changes
     * nothing for the engine (grpc-java keeps the config it had as well).
     */
    private final class WatchedResolver extends NameResolver {

        private final NameResolver delegate;
        private final Parser parser;
        /** Where the interceptor engine's channels take the resolver's policies; absent with the native engine. */
        private final @Nullable ReloadableChannels channels;

        WatchedResolver(NameResolver delegate, Parser parser, @Nullable ReloadableChannels channels) {
            this.delegate = delegate;
            this.parser = parser;
            this.channels = channels;
        }

        private void answered(ResolutionResult result) {
            ConfigOrError sc = result.getServiceConfig();
            Parsed parsed = parser.last;
            if (sc == null) {
                answeredWithoutConfig(parser.channel, channels);
            } else if (channels != null && parsed != null && parsed.result() == sc) {
                channels.resolverServiceConfig(parser.channel, parsed.forEngine());
            }
            ended();
        }

        /** The resolver answered, failed or was shut down: the channel's waiting calls go on. */
        private void ended() {
            if (channels != null) {
                channels.resolverAnswered(parser.channel);
            }
        }

        @Override
        public String getServiceAuthority() {
            return delegate.getServiceAuthority();
        }

        @Override
        public void start(Listener2 listener) {
            delegate.start(new Listener2() {
                @Override
                public void onResult(ResolutionResult result) {
                    listener.onResult(result);
                    answered(result);
                }

                @Override
                public Status onResult2(ResolutionResult result) {
                    Status status = listener.onResult2(result);
                    answered(result);
                    return status;
                }

                @Override
                public void onError(Status error) {
                    listener.onError(error);
                    ended();
                }
            });
        }

        @Override
        public void refresh() {
            delegate.refresh();
        }

        @Override
        public void shutdown() {
            delegate.shutdown();
            ended();
        }
    }
}
