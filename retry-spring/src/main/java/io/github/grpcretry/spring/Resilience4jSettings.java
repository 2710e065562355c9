package io.github.grpcretry.spring;

import io.github.grpcretry.integration.Resilience4jRetryReferences;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What a line tells {@link GrpcRetryResilience4jConfiguration}: the {@code resilience4j-retry} instance
 * each channel names (null where none), whether the native engine runs (it ignores them, with a WARN),
 * and how an application of that line gets a {@code RetryRegistry} bean (part of the start-up report).
 */
public record Resilience4jSettings(Map<String, @Nullable String> instanceByChannel, boolean nativeEngine,
        String registryHint) {

    Resilience4jRetryReferences references() {
        return Resilience4jRetryReferences.of(instanceByChannel, registryHint);
    }
}
