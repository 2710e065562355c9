package io.github.grpcretry.spring;

import io.github.grpcretry.spring.channel.ChannelSetup;
import io.github.grpcretry.spring.channel.Resilience4jRetryReferences;
import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What a line tells {@link GrpcRetryResilience4jConfiguration}: the {@code resilience4j-retry} instance
 * each channel names (null where none), whether the native engine runs (it ignores them, with a WARN),
 * and how an application of that line gets a {@code RetryRegistry} bean (part of the start-up report).
 */
public record Resilience4jSettings(Map<String, @Nullable String> instanceByChannel, boolean nativeEngine,
        String registryHint) {

    /** The settings of the bound channels ({@code resilience4j-retry} of each) and engine. */
    public static Resilience4jSettings of(GrpcRetryProperties properties, String registryHint) {
        Map<String, @Nullable String> names = new HashMap<>();
        properties.clients().forEach((channel, client) -> names.put(channel, client == null ? null : client.resilience4jRetry()));
        return new Resilience4jSettings(names, properties.engine() == ChannelSetup.Engine.NATIVE, registryHint);
    }

    Resilience4jRetryReferences references() {
        return Resilience4jRetryReferences.of(instanceByChannel, registryHint);
    }
}
