package io.github.grpcretry.spring.channel;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * The {@code resilience4j-retry} names of a configuration, each with the property that set it
 * ({@code grpc.retry.clients.<channel>.resilience4j-retry}), and their start-up checks, shared by both
 * Spring Boot lines: a name must be an instance of the application's resilience4j {@code RetryRegistry};
 * without resilience4j or without a registry bean, any name stops start-up; the native engine ignores
 * the names (a WARN each). Loads no resilience4j class.
 */
public final class Resilience4jRetryReferences {

    /** One {@code resilience4j-retry} value and where it was set. */
    public record Reference(String path, String instance) {
    }

    private final List<Reference> references;
    private final String howToAddARegistry;

    private Resilience4jRetryReferences(List<Reference> references, String howToAddARegistry) {
        this.references = List.copyOf(references);
        this.howToAddARegistry = howToAddARegistry;
    }

    /**
     * The names set per channel (GLOBAL first, then the channels by name; blank names ignored).
     *
     * @param byChannel the {@code resilience4j-retry} value of each channel, GLOBAL included (null for none)
     * @param howToAddARegistry the fix that gives the application a {@code RetryRegistry} bean on this
     *     Spring Boot line, e.g. {@code "add io.github.resilience4j:resilience4j-spring-boot3 (it makes a
     *     RetryRegistry from resilience4j.retry.*)"}
     */
    public static Resilience4jRetryReferences of(Map<String, ? extends @Nullable String> byChannel,
            String howToAddARegistry) {
        List<Reference> refs = new ArrayList<>();
        add(refs, ChannelRetryConfigs.GLOBAL, byChannel.get(ChannelRetryConfigs.GLOBAL));
        for (String channel : new TreeSet<>(byChannel.keySet())) {
            if (!channel.equals(ChannelRetryConfigs.GLOBAL)) {
                add(refs, channel, byChannel.get(channel));
            }
        }
        return new Resilience4jRetryReferences(refs, howToAddARegistry);
    }

    private static void add(List<Reference> refs, String channel, @Nullable String instance) {
        if (instance != null && !instance.isBlank()) {
            refs.add(new Reference("grpc.retry.clients." + channel + ".resilience4j-retry", instance.trim()));
        }
    }

    public List<Reference> references() {
        return references;
    }

    public boolean isEmpty() {
        return references.isEmpty();
    }

    /** Fails start-up when any channel names an instance although resilience4j-retry is not on the classpath. */
    public void checkWithoutResilience4j() {
        List<ConfigProblem> problems = new ArrayList<>();
        for (Reference r : references) {
            problems.add(new ConfigProblem(r.path(), r.instance(),
                    "names a resilience4j Retry instance, but resilience4j-retry is not on the classpath",
                    howToAddARegistry + " and declare resilience4j.retry.instances." + r.instance()
                            + ".*, or remove the property"));
        }
        throwIfAny(problems);
    }

    /**
     * Fails start-up when a named instance is not in the registry, or there is no registry.
     *
     * @param instances the names the RetryRegistry holds; null when there is no RetryRegistry bean
     */
    public void check(@Nullable Collection<String> instances) {
        List<ConfigProblem> problems = new ArrayList<>();
        for (Reference r : references) {
            if (instances == null) {
                problems.add(new ConfigProblem(r.path(), r.instance(),
                        "names a resilience4j Retry instance, but the application has no RetryRegistry bean",
                        howToAddARegistry + ", or declare a RetryRegistry @Bean holding '" + r.instance()
                                + "', or remove the property"));
            } else if (!instances.contains(r.instance())) {
                Set<String> known = new TreeSet<>(instances);
                problems.add(new ConfigProblem(r.path(), r.instance(),
                        "names no Retry instance of the resilience4j RetryRegistry (it holds: "
                                + (known.isEmpty() ? "none" : String.join(", ", known)) + ")",
                        "declare it under resilience4j.retry.instances." + r.instance()
                                + ".* (e.g. max-attempts, wait-duration; base-config: default for the defaults)"
                                + (known.isEmpty() ? "" : ", or name one of: " + String.join(", ", known))));
            }
        }
        throwIfAny(problems);
    }

    /**
     * {@link #check} the names against the registry's instances, then, with the native engine, one WARN
     * per name through {@code warn}.
     */
    public void check(@Nullable Collection<String> instances, boolean nativeEngine, java.util.function.Consumer<String> warn) {
        check(instances);
        if (nativeEngine) {
            nativeEngineWarnings().forEach(warn);
        }
    }

    /** One WARN line per name when the native engine (which ignores them all) is on. */
    public List<String> nativeEngineWarnings() {
        List<String> warnings = new ArrayList<>();
        for (Reference r : references) {
            warnings.add(r.path() + " = " + r.instance() + " is ignored: grpc.retry.engine=native (grpc-java's "
                    + "own retry) takes its policies from the service config only; use engine=interceptor for "
                    + "the resilience4j bridge");
        }
        return warnings;
    }

    private static void throwIfAny(List<ConfigProblem> problems) {
        if (!problems.isEmpty()) {
            throw new InvalidRetryConfigurationException(problems);
        }
    }
}
