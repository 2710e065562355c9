package io.github.grpcretry.springgrpc;

import io.github.grpcretry.config.RetryConfigResolver;
import io.github.grpcretry.spring.SpringBoundValues;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientProperties;
import org.springframework.boot.grpc.client.autoconfigure.ServiceConfig;

/**
 * Spring Boot's own per-channel client properties ({@code spring.grpc.client.channel.<name>.*}) as
 * this starter reads them: the typed service config (the base layer of a channel's configuration) and
 * {@code default.deadline}, with Boot's whole-channel fallback: a channel without an entry of its own
 * gets the {@code default} entry, all of it.
 */
final class BootChannelProperties {

    /** Boot's prefix of a channel's properties. */
    static final String PREFIX = "spring.grpc.client.channel.";

    /** The name of Boot's fallback entry. */
    static final String DEFAULT_CHANNEL = "default";

    private final Map<String, GrpcClientProperties.Channel> channels;

    BootChannelProperties(@Nullable GrpcClientProperties properties) {
        this.channels = properties == null ? Map.of() : properties.getChannel();
    }

    /** The channels that have an entry of their own (the {@code default} entry included). */
    Set<String> names() {
        return channels.keySet();
    }

    /** The key of the entry Boot uses for {@code channel}: its own, else {@code default}; null when neither exists. */
    @Nullable String entryFor(String channel) {
        if (channels.containsKey(channel)) {
            return channel;
        }
        return channels.containsKey(DEFAULT_CHANNEL) ? DEFAULT_CHANNEL : null;
    }

    /** Boot's {@code default.deadline} for {@code channel} (0 or less counts as unset, as Boot treats it). */
    @Nullable Duration defaultDeadline(String channel) {
        String key = entryFor(channel);
        GrpcClientProperties.Channel entry = key == null ? null : channels.get(key);
        if (entry == null) {
            return null;
        }
        Duration d = entry.getDefault().getDeadline();
        return d == null || d.isNegative() || d.isZero() ? null : d;
    }

    /**
     * Boot's {@code default.load-balancing-policy} for {@code channel} (its entry's, else the {@code default}
     * entry's), which Boot gives the builder as its default policy name; Boot's default {@code round_robin} when
     * neither entry sets it.
     */
    String defaultPolicy(String channel) {
        String key = entryFor(channel);
        GrpcClientProperties.Channel entry = key == null ? null : channels.get(key);
        String policy = entry == null ? null : entry.getDefault().getLoadBalancingPolicy();
        return policy == null || policy.isBlank() ? new GrpcClientProperties.Channel().getDefault().getLoadBalancingPolicy()
                : policy;
    }

    /** The property path of the service config of entry {@code key}. */
    static String serviceConfigPath(String key) {
        return PREFIX + key + ".service-config";
    }

    /**
     * The service config of entry {@code key} in this project's plain form (retry, hedging, throttling,
     * timeouts, wait-for-ready and message limits; Boot's load balancing and health check stay Boot's),
     * read through the accessors of Boot's own records and converted as grpc.retry.clients is
     * ({@link SpringBoundValues}), or null when the entry has none.
     */
    RetryConfigResolver.@Nullable ServiceConfigProperties serviceConfig(String key) {
        GrpcClientProperties.Channel channel = channels.get(key);
        ServiceConfig sc = channel == null ? null : channel.getServiceConfig();
        if (sc == null || (isEmpty(sc.method()) && sc.retrythrottling() == null)) {
            return null;
        }
        ServiceConfig.RetryThrottlingPolicy t = sc.retrythrottling();
        return new RetryConfigResolver.ServiceConfigProperties(SpringBoundValues.each(sc.method(), m -> {
            ServiceConfig.MethodConfig.RetryPolicy r = m.retry();
            ServiceConfig.MethodConfig.HedgingPolicy h = m.hedging();
            return SpringBoundValues.method(
                    SpringBoundValues.each(m.name(), n -> new RetryConfigResolver.NameProperties(n.service(), n.method())),
                    m.waitForReady(), m.timeout(), m.maxRequestMessage(), m.maxResponseMessage(),
                    r == null ? null : RetryConfigResolver.RetryProperties.of(r.maxAttempts(), r.initialBackoff(), r.maxBackoff(),
                            r.backoffMultiplier(), r.retryableStatusCodes(), r.perAttemptReceiveTimeout()),
                    h == null ? null : SpringBoundValues.hedging(h.maxAttempts(), h.delay(), h.nonFatalStatusCodes()));
        }), t == null ? null : SpringBoundValues.throttling(t.maxTokens(), t.tokenRatio()));
    }

    private static boolean isEmpty(@Nullable List<?> list) {
        return list == null || list.isEmpty();
    }
}
