package io.github.grpcretry.autoconfigure.resilience4j;

import io.github.grpcretry.autoconfigure.GrpcRetryProperties;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * The {@code resilience4j-retry} names of the configuration, each with the property that set it
 * ({@code grpc.retry.clients.<channel>.resilience4j-retry}, or GLOBAL's for the channels that inherit
 * it), and their start-up validation. Loads no resilience4j class.
 */
public final class Resilience4jRetryReferences {

    /** One {@code resilience4j-retry} value and where it was set. */
    public record Reference(String path, String instance) {
    }

    private final List<Reference> references;

    private Resilience4jRetryReferences(List<Reference> references) {
        this.references = List.copyOf(references);
    }

    /** Every {@code resilience4j-retry} set in {@code properties} (GLOBAL first, then channels by name). */
    public static Resilience4jRetryReferences of(GrpcRetryProperties properties) {
        List<Reference> refs = new ArrayList<>();
        Map<String, GrpcRetryProperties.ClientProperties> clients = properties.getClients();
        GrpcRetryProperties.ClientProperties global = clients.get(ChannelRetryConfigs.GLOBAL);
        add(refs, ChannelRetryConfigs.GLOBAL, global);
        for (String channel : new TreeSet<>(clients.keySet())) {
            if (!channel.equals(ChannelRetryConfigs.GLOBAL)) {
                add(refs, channel, clients.get(channel));
            }
        }
        return new Resilience4jRetryReferences(refs);
    }

    private static void add(List<Reference> refs, String channel, GrpcRetryProperties.ClientProperties client) {
        if (client != null && client.getResilience4jRetry() != null && !client.getResilience4jRetry().isBlank()) {
            refs.add(new Reference("grpc.retry.clients." + channel + ".resilience4j-retry",
                    client.getResilience4jRetry().trim()));
        }
    }

    public List<Reference> references() {
        return references;
    }

    public boolean isEmpty() {
        return references.isEmpty();
    }

    /** Fails start-up when any channel names an instance although resilience4j-retry is not on the classpath. */
    void checkWithoutResilience4j() {
        List<ConfigProblem> problems = new ArrayList<>();
        for (Reference r : references) {
            problems.add(new ConfigProblem(r.path(), r.instance(),
                    "names a resilience4j Retry instance, but resilience4j-retry is not on the classpath",
                    "add io.github.resilience4j:resilience4j-spring-boot3 (it makes a RetryRegistry from "
                            + "resilience4j.retry.*) and declare resilience4j.retry.instances." + r.instance()
                            + ".*, or remove the property"));
        }
        throwIfAny(problems);
    }

    /**
     * Fails start-up when a named instance is not in the registry, or there is no registry.
     *
     * @param instances the names the RetryRegistry holds; null when there is no RetryRegistry bean
     */
    void check(Collection<String> instances) {
        List<ConfigProblem> problems = new ArrayList<>();
        for (Reference r : references) {
            if (instances == null) {
                problems.add(new ConfigProblem(r.path(), r.instance(),
                        "names a resilience4j Retry instance, but the application has no RetryRegistry bean",
                        "add io.github.resilience4j:resilience4j-spring-boot3 (it makes a RetryRegistry from "
                                + "resilience4j.retry.*) or declare a RetryRegistry @Bean holding '" + r.instance()
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

    /** Warns that the native engine ignores every {@code resilience4j-retry}. */
    void warnIfNativeEngine(GrpcRetryProperties.Engine engine, Consumer<String> warnings) {
        if (engine != GrpcRetryProperties.Engine.NATIVE) {
            return;
        }
        for (Reference r : references) {
            warnings.accept(r.path() + " = " + r.instance() + " is ignored: grpc.retry.engine=native (grpc-java's "
                    + "own retry) takes its policies from the service config only; use engine=interceptor for "
                    + "the resilience4j bridge");
        }
    }

    private static void throwIfAny(List<ConfigProblem> problems) {
        if (!problems.isEmpty()) {
            throw new InvalidRetryConfigurationException(problems);
        }
    }
}
