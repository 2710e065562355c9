package io.github.grpcretry.spring;

import io.github.grpcretry.config.RetryConfigResolver.AdaptiveHedgingProperties;
import io.github.grpcretry.config.RetryConfigResolver.BudgetProperties;
import io.github.grpcretry.config.RetryConfigResolver.ClientProperties;
import io.github.grpcretry.config.RetryConfigResolver.HedgingProperties;
import io.github.grpcretry.config.RetryConfigResolver.MethodProperties;
import io.github.grpcretry.config.RetryConfigResolver.NameProperties;
import io.github.grpcretry.config.RetryConfigResolver.RetryProperties;
import io.github.grpcretry.config.RetryConfigResolver.RetryThrottlingProperties;
import io.github.grpcretry.config.RetryConfigResolver.ServiceConfigProperties;
import io.github.grpcretry.config.RetryConfigResolver.StreamsProperties;
import io.github.grpcretry.config.RetryConfigResolver;
import io.grpc.Status;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.FileSystemResource;
import org.springframework.core.io.Resource;
import org.springframework.util.unit.DataSize;

/**
 * The bound properties as the configuration resolver takes them, read through their typed accessors:
 * a channel's {@link GrpcRetryClientProperties} (both lines), and the parts from which a line maps a
 * framework's own service-config type of the same shape (Spring Boot 4's
 * {@code spring.grpc.client.channel.<name>.service-config}). Spring's {@link DataSize} and
 * {@link Resource} become the resolver's sizes and read files here.
 */
public final class SpringBoundValues {

    private SpringBoundValues() {
    }

    /** One bound channel ({@code grpc.retry.clients.<channel>}); a null channel has nothing set. */
    public static ClientProperties client(@Nullable GrpcRetryClientProperties c) {
        if (c == null) {
            return ClientProperties.NONE;
        }
        GrpcRetryClientProperties.Budget b = c.budget();
        return new ClientProperties(serviceConfig(c.serviceConfig()),
                c.serviceConfigFile() == null ? null : file(c.serviceConfigFile()),
                b == null ? null : new BudgetProperties(b.ratio(), b.minRetriesPerSecond(), b.ttl()),
                c.maxAttemptsCap(), size(c.perRpcBufferLimit()), size(c.retryBufferSize()), c.connectTimeout(),
                c.resilience4jRetry(), c.retryInfo(), c.retryInfoMaxDelay(), adaptiveHedging(c.adaptiveHedging()),
                c.avoidTriedBackends(), c.backendPicks(),
                c.streams() == null ? null : new StreamsProperties(c.streams().idleTimeout(), c.streams().maxResumes()));
    }

    private static @Nullable AdaptiveHedgingProperties adaptiveHedging(
            GrpcRetryClientProperties.@Nullable AdaptiveHedging a) {
        return a == null ? null : new AdaptiveHedgingProperties(a.enabled(), a.maxExtraLoad(), a.minDelay(),
                a.maxDelay(), a.minSamples(), a.window());
    }

    private static @Nullable ServiceConfigProperties serviceConfig(GrpcRetryClientProperties.@Nullable ServiceConfig sc) {
        if (sc == null) {
            return null;
        }
        GrpcRetryClientProperties.Throttling t = sc.retrythrottling();
        return new ServiceConfigProperties(each(sc.method(), m -> {
            GrpcRetryClientProperties.Retry r = m.retry();
            GrpcRetryClientProperties.Hedging h = m.hedging();
            return method(each(m.name(), n -> new NameProperties(n.service(), n.method())), m.waitForReady(), m.timeout(),
                    m.maxRequestMessage(), m.maxResponseMessage(),
                    r == null ? null : RetryProperties.of(r.maxAttempts(), r.initialBackoff(), r.maxBackoff(), r.backoffMultiplier(),
                            r.retryableStatusCodes(), r.perAttemptReceiveTimeout()),
                    h == null ? null : hedging(h.maxAttempts(), h.delay(), h.nonFatalStatusCodes()));
        }), t == null ? null : throttling(t.maxTokens(), t.tokenRatio()));
    }

    /** Each element of a bound list mapped ({@code null} stays null, in its place); null for no list. */
    public static <T, R> @Nullable List<@Nullable R> each(@Nullable Collection<? extends @Nullable T> list,
            Function<T, R> map) {
        if (list == null) {
            return null;
        }
        List<@Nullable R> out = new ArrayList<>(list.size());
        for (T e : list) {
            out.add(e == null ? null : map.apply(e));
        }
        return out;
    }

    /** A method entry. */
    public static MethodProperties method(@Nullable List<@Nullable NameProperties> names, @Nullable Boolean waitForReady,
            @Nullable Duration timeout, @Nullable DataSize maxRequestMessage, @Nullable DataSize maxResponseMessage,
            @Nullable RetryProperties retry, @Nullable HedgingProperties hedging) {
        return new MethodProperties(names, waitForReady, timeout, size(maxRequestMessage), size(maxResponseMessage),
                retry, hedging);
    }

    /** A hedging policy. */
    public static HedgingProperties hedging(@Nullable Integer maxAttempts, @Nullable Duration delay,
            @Nullable Collection<Status.Code> nonFatalStatusCodes) {
        return new HedgingProperties(maxAttempts, delay, nonFatalStatusCodes == null ? null
                : nonFatalStatusCodes.stream().map(Status.Code::name).toList());
    }

    /** Retry throttling (a {@code Float} taken as the decimal written). */
    public static RetryThrottlingProperties throttling(@Nullable Number maxTokens, @Nullable Number tokenRatio) {
        return RetryThrottlingProperties.of(maxTokens, tokenRatio);
    }

    private static RetryConfigResolver.@Nullable Size size(@Nullable DataSize size) {
        return size == null ? null : new RetryConfigResolver.Size(size.toBytes(), size.toString());
    }

    private static RetryConfigResolver.ServiceConfigFile file(Resource resource) {
        String name = describe(resource);
        if (resource instanceof ClassPathResource cp && !resource.exists()) {
            // Spring reads a value without a prefix (/etc/app/sc.json) as a class path resource.
            java.io.File onDisk = new java.io.File("/" + cp.getPath());
            return RetryConfigResolver.ServiceConfigFile.unreadable(name, "the service config file does not exist on the"
                    + " class path (a value without a classpath: or file: prefix is looked up on the class path)",
                    onDisk.isFile() ? "write file:" + onDisk.getPath() + " for the file on disk"
                            : "point it to an existing file, e.g. classpath:service-config.json or file:/etc/app/service-config.json");
        }
        try {
            if (resource.exists() && resource.isFile() && resource.getFile().isDirectory()) {
                return RetryConfigResolver.ServiceConfigFile.unreadable(name, "the service config file is a directory",
                        "point it to the JSON file itself");
            }
        } catch (IOException | RuntimeException e) {
            // not a file on disk: read as any resource below
        }
        return RetryConfigResolver.ServiceConfigFile.read(name, resource.exists(), resource::getInputStream);
    }

    /** How a file is named in problems: {@code classpath:sc.json}, {@code file:/x/sc.json}, else Spring's description. */
    public static String describe(Resource resource) {
        if (resource instanceof ClassPathResource cp) {
            return "classpath:" + cp.getPath();
        }
        if (resource instanceof FileSystemResource fs) {
            return "file:" + fs.getPath();
        }
        try {
            if (resource.isFile()) {
                return "file:" + resource.getFile().getPath();
            }
            return resource.getURL().toString();
        } catch (IOException | RuntimeException e) {
            return resource.getDescription();
        }
    }
}
