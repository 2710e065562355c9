package io.github.grpcretry.springgrpc;

import io.github.grpcretry.config.RetryConfigResolver;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.policy.ServiceConfigCustomizer;
import io.github.grpcretry.spring.GrpcRetryClientProperties;
import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.spring.SpringBoundValues;
import io.github.grpcretry.spring.channel.ChannelSetup;
import io.github.grpcretry.spring.reload.PolicySources;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The effective configuration of every Spring gRPC channel. Layers, lowest first: Spring Boot's
 * {@code spring.grpc.client.channel.<name>.service-config} (or the {@code default} entry's, for a
 * channel without an entry of its own, as Boot itself falls back), the channel's
 * {@code service-config-file}, its typed {@code grpc.retry.clients.<name>.service-config}; then GLOBAL
 * field by field, validation, the {@link ServiceConfigCustomizer}s and the cap (see docs/design.md).
 *
 * <p>Every channel named under {@code grpc.retry.clients} or {@code spring.grpc.client.channel} is
 * resolved at start-up, each with its own base layer, all problems together. A channel first seen when
 * it is created (named only in code) is resolved then, once, from GLOBAL and Boot's {@code default}
 * entry only: the other channels were validated at start-up and are neither validated again nor
 * changed. Boot's {@code default} entry is resolved at start-up (its problems are reported then) but is
 * not a channel: {@link #configuredChannels()} leaves it out.
 */
final class SpringGrpcRetryConfigs implements ChannelRetryConfigs {

    private final GrpcRetryProperties properties;
    private final BootChannelProperties boot;
    private final List<ServiceConfigCustomizer> customizers;
    private final Consumer<String> warnings;
    private final ChannelRetryConfigs resolved;
    private final Set<String> resolvedNames;
    private final Map<String, ChannelRetryConfig> late = new ConcurrentHashMap<>();

    private SpringGrpcRetryConfigs(GrpcRetryProperties properties, BootChannelProperties boot,
            List<ServiceConfigCustomizer> customizers, Consumer<String> warnings) {
        this.properties = properties;
        this.boot = boot;
        this.customizers = List.copyOf(customizers);
        this.warnings = warnings;
        Set<String> names = new LinkedHashSet<>();
        for (String key : properties.clients().keySet()) {
            if (!RetryConfigResolver.isGlobal(key)) {
                names.add(key);
            }
        }
        names.addAll(boot.names());
        this.resolvedNames = Collections.unmodifiableSet(names);
        // the native engine's start-up warnings once, from the resolution of every configured channel
        RetryConfigResolver resolver = resolver(properties.clients().keySet())
                .nativeEngine(properties.engine() == ChannelSetup.Engine.NATIVE);
        for (String name : names) {
            addBase(resolver, name);
        }
        this.resolved = resolveDistinct(resolver);
    }

    /**
     * Resolves and validates every channel the properties name.
     *
     * @throws InvalidRetryConfigurationException listing every problem, each named by its property path
     */
    static SpringGrpcRetryConfigs resolve(GrpcRetryProperties properties, BootChannelProperties boot,
            List<ServiceConfigCustomizer> customizers, Consumer<String> warnings) {
        return new SpringGrpcRetryConfigs(properties, boot, customizers, warnings);
    }

    @Override
    public ChannelRetryConfig forChannel(String channel) {
        String entry = boot.entryFor(channel);
        if (resolvedNames.contains(channel) || entry == null || boot.serviceConfig(entry) == null) {
            return resolved.forChannel(channel);
        }
        return late.computeIfAbsent(channel, name -> {
            RetryConfigResolver resolver = resolver(keysFor(name));
            addBase(resolver, name);
            return resolveDistinct(resolver).forChannel(name);
        });
    }

    @Override
    public Set<String> configuredChannels() {
        Set<String> all = new LinkedHashSet<>(resolved.configuredChannels());
        if (!properties.clients().containsKey(BootChannelProperties.DEFAULT_CHANNEL)) {
            all.remove(BootChannelProperties.DEFAULT_CHANNEL);
        }
        all.addAll(late.keySet());
        return all;
    }

    /**
     * The keys under grpc.retry.clients a late channel takes: GLOBAL's (any case) and those of its own entry
     * when its name has the uniform form of the channel's ({@link RetryConfigResolver#matches}).
     */
    private Set<String> keysFor(String channel) {
        Set<String> keys = new LinkedHashSet<>();
        for (String key : properties.clients().keySet()) {
            if (RetryConfigResolver.isGlobal(key) || RetryConfigResolver.matches(key, channel)) {
                keys.add(key);
            }
        }
        return keys;
    }

    /** A resolver of the grpc.retry.clients entries under {@code keys}. */
    private RetryConfigResolver resolver(Set<String> keys) {
        RetryConfigResolver resolver = RetryConfigResolver.create().customizers(customizers).warnings(warnings);
        for (String key : keys) {
            resolver.client(key, SpringBoundValues.client(properties.clients().get(key)));
        }
        return resolver;
    }

    private void addBase(RetryConfigResolver resolver, String channel) {
        String key = boot.entryFor(channel);
        if (key == null) {
            return;
        }
        RetryConfigResolver.ServiceConfigProperties base = boot.serviceConfig(key);
        if (base != null) {
            resolver.baseServiceConfig(channel, base, BootChannelProperties.serviceConfigPath(key));
        }
    }

    /** Resolves; a problem of Boot's {@code default} entry that several channels inherit is reported once. */
    private static ChannelRetryConfigs resolveDistinct(RetryConfigResolver resolver) {
        try {
            return resolver.resolve();
        } catch (InvalidRetryConfigurationException e) {
            List<ConfigProblem> distinct = new ArrayList<>(new LinkedHashSet<>(e.getProblems()));
            if (distinct.size() == e.getProblems().size()) {
                throw e;
            }
            throw new InvalidRetryConfigurationException(distinct);
        }
    }

    /**
     * Where {@code channel}'s configured policies come from: {@link PolicySources#BOOT_SERVICE_CONFIG} when
     * the Boot entry it uses (its own or {@code default}) has retry, hedging or retry throttling;
     * {@link PolicySources#YAML} when its own or GLOBAL's grpc.retry entry has a service config or file.
     */
    static Set<String> policySources(GrpcRetryProperties properties, BootChannelProperties boot, String channel) {
        Set<String> sources = new LinkedHashSet<>();
        String key = boot.entryFor(channel);
        RetryConfigResolver.ServiceConfigProperties base = key == null ? null : boot.serviceConfig(key);
        if (base != null && hasPolicy(base)) {
            sources.add(PolicySources.BOOT_SERVICE_CONFIG);
        }
        for (Map.Entry<String, GrpcRetryClientProperties> e : properties.clients().entrySet()) {
            GrpcRetryClientProperties c = e.getValue();
            if ((RetryConfigResolver.matches(e.getKey(), channel) || RetryConfigResolver.isGlobal(e.getKey())) && c != null
                    && (c.serviceConfig() != null || c.serviceConfigFile() != null)) {
                sources.add(PolicySources.YAML);
            }
        }
        return sources;
    }

    private static boolean hasPolicy(RetryConfigResolver.ServiceConfigProperties sc) {
        if (sc.retrythrottling() != null) {
            return true;
        }
        for (RetryConfigResolver.MethodProperties m : sc.method() == null ? List.<RetryConfigResolver.MethodProperties>of() : sc.method()) {
            if (m != null && (m.retry() != null || m.hedging() != null)) {
                return true;
            }
        }
        return false;
    }
}
