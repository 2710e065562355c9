package io.github.grpcretry.integration;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.grpc.ManagedChannelBuilder;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
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
 * this class puts itself between the resolver and grpc-java's parser, per channel:
 * <ul>
 *   <li>interceptor engine: the resolver's retry and hedging policies and retry throttling are removed
 *       (its load balancing and the rest stay; the channel's own method entries, without retry parts, are
 *       laid over it as on the native engine), so grpc-java never retries underneath the engine's
 *       attempts; one WARN per channel names the channel and the dropped policy;</li>
 *   <li>native engine: the channel's own method configs and throttling are laid over the resolver's
 *       config (the channel's entry for a name wins; the resolver's entries for other names stay), so
 *       what the properties say runs; one WARN per channel says so.</li>
 * </ul>
 * It is installed with the resolver of the channel's target wrapped ({@code nameResolverFactory}), so
 * it does not apply to channels with a direct address (in-process by name, {@code forAddress}: they have
 * no resolver) or whose builder is given another resolver factory afterwards. Whatever the resolver says,
 * the interceptor engine's channels also get grpc-java's caps of 1 ({@link ChannelSetup#capUnderlyingRetries}),
 * which covers policies that bypass the parser (xDS routes). The endpoint shows both per channel
 * ({@link #report}). docs/spring-boot-4.md describes the behaviour on both engines.
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
    private final Map<String, ResolverOutcome> resolved = new ConcurrentHashMap<>();

    /** What a channel's resolver supplied and what was done with it (a WARN when it first supplies a policy, and when that changes). */
    private record ResolverOutcome(String supplied, String outcome, boolean resolverPolicyRuns) {
    }

    /**
     * @param configured the sources ({@link #YAML}, {@link #BOOT_SERVICE_CONFIG}) of the policies a channel's
     *     configuration holds
     * @param warnings receives the one warning per channel whose resolver supplies a policy
     */
    public PolicySources(ChannelSetup.Engine engine, Function<String, Set<String>> configured, Consumer<String> warnings) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.configured = Objects.requireNonNull(configured, "configured");
        this.warnings = Objects.requireNonNull(warnings, "warnings");
    }

    /**
     * Puts the resolver's service config under this class's control for the channel built by
     * {@code builder}; the channel's configuration is read when the resolver first delivers a config.
     *
     * @return whether it was installed (false for a builder with a direct address, or whose target's
     *     scheme no resolver serves)
     */
    public boolean install(ManagedChannelBuilder<?> builder, String channel, Supplier<ChannelRetryConfig> config) {
        String target = target(builder);
        if (target == null) {
            return false;
        }
        NameResolverProvider provider = providerFor(target, NameResolverRegistry.getDefaultRegistry());
        if (provider == null) {
            return false;
        }
        try {
            setFactory(builder, new Provider(provider, parser -> new Parser(parser, channel, config)));
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

    /** The service config the resolver hands over, as grpc-java is to parse it for the channel's engine. */
    Map<String, ?> adjust(String channel, Map<String, ?> raw, ChannelRetryConfig config) {
        String supplied = retryParts(raw);
        if (supplied == null) {
            return raw;
        }
        Map<String, Object> own = ChannelSetup.serviceConfigMap(config, engine);
        if (engine == ChannelSetup.Engine.INTERCEPTOR) {
            record(channel, supplied, "dropped: the interceptor engine runs the channel's own policies and grpc-java"
                    + " never retries or hedges underneath them", false);
            Map<String, Object> stripped = ChannelSetup.withoutRetry(raw);
            // The channel's own wait-for-ready, timeouts and message limits, as its default config has them.
            return own.isEmpty() ? stripped : merge(stripped, own).config();
        }
        if (own.isEmpty()) {
            record(channel, supplied, "used: the channel configures no policy of its own", true);
            return raw;
        }
        Merged merged = merge(raw, own);
        record(channel, supplied, "merged: the channel's own method configs and retry throttling were laid over it"
                + (merged.resolverPolicyKept() ? "; the resolver's policies for other methods stay" : ""),
                merged.resolverPolicyKept());
        return merged.config();
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

    /** The channel's parser: adjusts what the resolver supplied, then lets grpc-java parse it. */
    private final class Parser extends NameResolver.ServiceConfigParser {

        private final NameResolver.ServiceConfigParser delegate;
        private final String channel;
        private final Supplier<ChannelRetryConfig> config;

        Parser(NameResolver.ServiceConfigParser delegate, String channel, Supplier<ChannelRetryConfig> config) {
            this.delegate = delegate;
            this.channel = channel;
            this.config = config;
        }

        @Override
        public NameResolver.ConfigOrError parseServiceConfig(Map<String, ?> rawServiceConfig) {
            return delegate.parseServiceConfig(adjust(channel, rawServiceConfig, config.get()));
        }
    }

    /**
     * The resolver provider of the channel's target, unchanged except that the resolver it makes is given
     * the channel's parser. Available (the registry held it) with the delegate's scheme and address types.
     */
    private static final class Provider extends NameResolverProvider {

        private final NameResolverProvider delegate;
        private final Function<NameResolver.ServiceConfigParser, NameResolver.ServiceConfigParser> parser;

        Provider(NameResolverProvider delegate,
                Function<NameResolver.ServiceConfigParser, NameResolver.ServiceConfigParser> parser) {
            this.delegate = delegate;
            this.parser = parser;
        }

        private NameResolver.Args args(NameResolver.Args args) {
            return args.toBuilder().setServiceConfigParser(parser.apply(args.getServiceConfigParser())).build();
        }

        @Override
        public @Nullable NameResolver newNameResolver(URI targetUri, NameResolver.Args args) {
            return delegate.newNameResolver(targetUri, args(args));
        }

        @Override
        public @Nullable NameResolver newNameResolver(Uri targetUri, NameResolver.Args args) {
            return delegate.newNameResolver(targetUri, args(args));
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
}
