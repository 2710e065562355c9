package io.github.grpcretry.autoconfigure;

import io.github.grpcretry.config.RetryConfigResolver;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.ServiceConfigCustomizer;
import io.github.grpcretry.spring.GrpcRetryClientProperties;
import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.spring.SpringBoundValues;
import io.github.grpcretry.spring.channel.ChannelSetup;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Hands the bound {@link GrpcRetryProperties} (and the service-config files they name, read here) to
 * retry-spring's {@link RetryConfigResolver}, which validates and merges them; every problem is named by
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
                .nativeEngine(properties.engine() == ChannelSetup.Engine.NATIVE);
        for (Map.Entry<String, GrpcRetryClientProperties> e : properties.clients().entrySet()) {
            resolver.client(e.getKey(), SpringBoundValues.client(e.getValue()));
        }
        return resolver.resolve();
    }
}
