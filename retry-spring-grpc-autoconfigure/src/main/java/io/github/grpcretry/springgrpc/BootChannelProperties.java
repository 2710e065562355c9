package io.github.grpcretry.springgrpc;

import io.github.grpcretry.integration.RetryConfigResolver;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientProperties;
import org.springframework.boot.grpc.client.autoconfigure.ServiceConfig;
import org.springframework.util.unit.DataSize;

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

    BootChannelProperties(GrpcClientProperties properties) {
        this.channels = properties == null ? Map.of() : properties.getChannel();
    }

    /** The channels that have an entry of their own (the {@code default} entry included). */
    Set<String> names() {
        return channels.keySet();
    }

    /** The key of the entry Boot uses for {@code channel}: its own, else {@code default}; null when neither exists. */
    String entryFor(String channel) {
        if (channels.containsKey(channel)) {
            return channel;
        }
        return channels.containsKey(DEFAULT_CHANNEL) ? DEFAULT_CHANNEL : null;
    }

    /** Boot's {@code default.deadline} for {@code channel} (0 or less counts as unset, as Boot treats it). */
    Duration defaultDeadline(String channel) {
        String key = entryFor(channel);
        if (key == null) {
            return null;
        }
        Duration d = channels.get(key).getDefault().getDeadline();
        return d == null || d.isNegative() || d.isZero() ? null : d;
    }

    /** The property path of the service config of entry {@code key}. */
    static String serviceConfigPath(String key) {
        return PREFIX + key + ".service-config";
    }

    /**
     * The service config of entry {@code key} in this project's plain form (retry, hedging, throttling,
     * timeouts, wait-for-ready and message limits; Boot's load balancing and health check stay Boot's),
     * or null when the entry has none.
     */
    RetryConfigResolver.ServiceConfigProperties serviceConfig(String key) {
        GrpcClientProperties.Channel channel = channels.get(key);
        ServiceConfig sc = channel == null ? null : channel.getServiceConfig();
        if (sc == null || (isEmpty(sc.method()) && sc.retrythrottling() == null)) {
            return null;
        }
        List<RetryConfigResolver.MethodProperties> methods = null;
        if (sc.method() != null) {
            methods = new ArrayList<>();
            for (ServiceConfig.MethodConfig m : sc.method()) {
                methods.add(m == null ? null : method(m));
            }
        }
        ServiceConfig.RetryThrottlingPolicy t = sc.retrythrottling();
        RetryConfigResolver.RetryThrottlingProperties throttling = t == null ? null
                : new RetryConfigResolver.RetryThrottlingProperties(number(t.maxTokens()), number(t.tokenRatio()));
        return new RetryConfigResolver.ServiceConfigProperties(methods, throttling);
    }

    private static RetryConfigResolver.MethodProperties method(ServiceConfig.MethodConfig m) {
        List<RetryConfigResolver.NameProperties> names = null;
        if (m.name() != null) {
            names = new ArrayList<>();
            for (ServiceConfig.MethodConfig.Name n : m.name()) {
                names.add(n == null ? null : new RetryConfigResolver.NameProperties(n.service(), n.method()));
            }
        }
        ServiceConfig.MethodConfig.RetryPolicy r = m.retry();
        RetryConfigResolver.RetryProperties retry = r == null ? null : new RetryConfigResolver.RetryProperties(
                r.maxAttempts(), r.initialBackoff(), r.maxBackoff(), r.backoffMultiplier(),
                codes(r.retryableStatusCodes()), r.perAttemptReceiveTimeout());
        ServiceConfig.MethodConfig.HedgingPolicy h = m.hedging();
        RetryConfigResolver.HedgingProperties hedging = h == null ? null : new RetryConfigResolver.HedgingProperties(
                h.maxAttempts(), h.delay(), codes(h.nonFatalStatusCodes()));
        return new RetryConfigResolver.MethodProperties(names, m.waitForReady(), m.timeout(),
                size(m.maxRequestMessage()), size(m.maxResponseMessage()), retry, hedging);
    }

    private static List<String> codes(Set<Status.Code> codes) {
        return codes == null ? null : codes.stream().map(Status.Code::name).toList();
    }

    private static RetryConfigResolver.Size size(DataSize size) {
        return size == null ? null : new RetryConfigResolver.Size(size.toBytes(), size.toString());
    }

    /** A bound {@code Float} as the decimal the user wrote (0.1, not 0.10000000149). */
    private static Double number(Float f) {
        return f == null ? null : Double.valueOf(Float.toString(f));
    }

    private static boolean isEmpty(List<?> list) {
        return list == null || list.isEmpty();
    }
}
