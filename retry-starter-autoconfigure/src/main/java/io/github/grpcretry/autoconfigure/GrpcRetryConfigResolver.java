package io.github.grpcretry.autoconfigure;

import io.github.grpcretry.autoconfigure.GrpcRetryProperties.ClientProperties;
import io.github.grpcretry.integration.RetryConfigResolver;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.ServiceConfigCustomizer;
import java.io.IOException;
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

    /** The bound properties of one channel, through retry-core's one mapping of both Spring Boot lines. */
    static RetryConfigResolver.ClientProperties client(ClientProperties c) {
        return RetryConfigResolver.ClientProperties.fromBound(c, BOUND_VALUES);
    }

    /** Spring's {@code DataSize} and {@code Resource} for retry-core's mapping. */
    private static final RetryConfigResolver.BoundValues BOUND_VALUES = new RetryConfigResolver.BoundValues() {
        @Override
        public RetryConfigResolver.Size size(Object value) {
            DataSize size = (DataSize) value;
            return new RetryConfigResolver.Size(size.toBytes(), size.toString());
        }

        @Override
        public RetryConfigResolver.ServiceConfigFile file(Object value) {
            return readFile((Resource) value);
        }
    };

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
