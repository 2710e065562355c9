package io.github.grpcretry.spring;

import io.github.grpcretry.integration.Resilience4jRetryReferences;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * What a line tells {@link GrpcRetryResilience4jConfiguration}: the {@code resilience4j-retry} instance
 * each channel names (null where none), whether the native engine runs (it ignores them, with a WARN),
 * and how an application of that line gets a {@code RetryRegistry} bean (part of the start-up report).
 */
public record Resilience4jSettings(Map<String, @Nullable String> instanceByChannel, boolean nativeEngine,
        String registryHint) {

    /** The settings of a line's bound clients ({@code instance} reads a client's {@code resilience4j-retry}). */
    public static <C> Resilience4jSettings of(Map<String, ? extends @Nullable C> clients,
            Function<C, @Nullable String> instance, boolean nativeEngine, String registryHint) {
        Map<String, @Nullable String> names = new HashMap<>();
        clients.forEach((channel, client) -> names.put(channel, client == null ? null : instance.apply(client)));
        return new Resilience4jSettings(names, nativeEngine, registryHint);
    }

    Resilience4jRetryReferences references() {
        return Resilience4jRetryReferences.of(instanceByChannel, registryHint);
    }
}
