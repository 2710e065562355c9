package io.github.grpcretry.autoconfigure;

import io.github.grpcretry.autoconfigure.GrpcRetryProperties.ClientProperties;
import io.github.grpcretry.autoconfigure.GrpcRetryProperties.HedgingProperties;
import io.github.grpcretry.autoconfigure.GrpcRetryProperties.MethodProperties;
import io.github.grpcretry.autoconfigure.GrpcRetryProperties.NameProperties;
import io.github.grpcretry.autoconfigure.GrpcRetryProperties.RetryProperties;
import io.github.grpcretry.autoconfigure.GrpcRetryProperties.RetryThrottlingProperties;
import io.github.grpcretry.integration.RetryConfigResolver;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.ServiceConfigCustomizer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.FileSystemResource;
import org.springframework.core.io.Resource;
import org.springframework.util.unit.DataSize;

/**
 * Hands the bound {@link GrpcRetryProperties} (and the service-config files they name, read here) to
 * retry-core's {@link RetryConfigResolver}, which validates and merges them; every problem is named by
 * its full property path.
 */
public final class GrpcRetryConfigResolver {

    public static final String PREFIX = RetryConfigResolver.CLIENTS_PREFIX;

    private GrpcRetryConfigResolver() {
    }

    /**
     * @throws io.github.grpcretry.policy.InvalidRetryConfigurationException listing every problem
     */
    public static ChannelRetryConfigs resolve(GrpcRetryProperties properties, List<ServiceConfigCustomizer> customizers,
            Consumer<String> warnings) {
        RetryConfigResolver resolver = RetryConfigResolver.create().customizers(customizers).warnings(warnings)
                .nativeEngine(properties.getEngine() == GrpcRetryProperties.Engine.NATIVE);
        for (Map.Entry<String, ClientProperties> e : properties.getClients().entrySet()) {
            ClientProperties client = e.getValue() == null ? new ClientProperties() : e.getValue();
            resolver.client(e.getKey(), client(client));
        }
        return resolver.resolve();
    }

    static RetryConfigResolver.ClientProperties client(ClientProperties c) {
        GrpcRetryProperties.Budget b = c.getBudget() == null ? new GrpcRetryProperties.Budget() : c.getBudget();
        return new RetryConfigResolver.ClientProperties(
                serviceConfig(c.getServiceConfig()),
                c.getServiceConfigFile() == null ? null : readFile(c.getServiceConfigFile()),
                new RetryConfigResolver.BudgetProperties(b.getRatio(), b.getMinRetriesPerSecond(), b.getTtl()),
                c.getMaxAttemptsCap(),
                size(c.getPerRpcBufferLimit()),
                size(c.getRetryBufferSize()),
                c.getConnectTimeout(),
                c.getResilience4jRetry());
    }

    private static RetryConfigResolver.ServiceConfigProperties serviceConfig(GrpcRetryProperties.ServiceConfigProperties sc) {
        if (sc == null) {
            return null;
        }
        List<RetryConfigResolver.MethodProperties> methods = new ArrayList<>();
        for (MethodProperties m : sc.getMethod() == null ? List.<MethodProperties>of() : sc.getMethod()) {
            methods.add(m == null ? null : method(m));
        }
        RetryThrottlingProperties t = sc.getRetrythrottling();
        return new RetryConfigResolver.ServiceConfigProperties(methods,
                t == null ? null : new RetryConfigResolver.RetryThrottlingProperties(t.getMaxTokens(), t.getTokenRatio()));
    }

    private static RetryConfigResolver.MethodProperties method(MethodProperties m) {
        List<RetryConfigResolver.NameProperties> names = new ArrayList<>();
        for (NameProperties n : m.getName() == null ? List.<NameProperties>of() : m.getName()) {
            names.add(n == null ? null : new RetryConfigResolver.NameProperties(n.getService(), n.getMethod()));
        }
        RetryProperties r = m.getRetry();
        HedgingProperties h = m.getHedging();
        return new RetryConfigResolver.MethodProperties(names, m.getWaitForReady(), m.getTimeout(),
                size(m.getMaxRequestMessage()), size(m.getMaxResponseMessage()),
                r == null ? null : new RetryConfigResolver.RetryProperties(r.getMaxAttempts(), r.getInitialBackoff(),
                        r.getMaxBackoff(), r.getBackoffMultiplier(), r.getRetryableStatusCodes(), r.getPerAttemptReceiveTimeout()),
                h == null ? null : new RetryConfigResolver.HedgingProperties(h.getMaxAttempts(), h.getDelay(),
                        h.getNonFatalStatusCodes()));
    }

    private static RetryConfigResolver.Size size(DataSize size) {
        return size == null ? null : new RetryConfigResolver.Size(size.toBytes(), size.toString());
    }

    private static RetryConfigResolver.ServiceConfigFile readFile(Resource resource) {
        return RetryConfigResolver.ServiceConfigFile.read(describe(resource), resource.exists(), resource::getInputStream);
    }

    /** How a file is named in problems: {@code classpath:sc.json}, {@code file:/x/sc.json}, else Spring's description. */
    static String describe(Resource resource) {
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
