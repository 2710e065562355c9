package io.github.grpcretry.autoconfigure;

import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.ResolvedChannelRetryConfigs;
import io.github.grpcretry.policy.ServiceConfigCustomizer;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import net.devh.boot.grpc.client.config.GrpcChannelsProperties;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * gRPC retry governance for net.devh clients: the validated per-channel configuration
 * ({@code grpcRetryChannelConfigs}, made eagerly so an invalid configuration stops start-up), the
 * limiter registry and the channel configurer that applies the chosen engine.
 */
@AutoConfiguration(beforeName = "net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration")
@ConditionalOnClass(GrpcChannelConfigurer.class)
@ConditionalOnProperty(prefix = "grpc.retry", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(GrpcRetryProperties.class)
public class GrpcRetryAutoConfiguration {

    private static final Log log = LogFactory.getLog(GrpcRetryAutoConfiguration.class);

    /** The effective configuration of every channel (validated, merged with GLOBAL, customized, capped). */
    @Bean
    public ResolvedChannelRetryConfigs grpcRetryChannelConfigs(GrpcRetryProperties properties,
            ObjectProvider<ServiceConfigCustomizer> customizers) {
        return GrpcRetryConfigResolver.resolve(properties, customizers.orderedStream().toList(), log::warn);
    }

    /** The per-channel throttles and budgets. */
    @Bean
    @ConditionalOnMissingBean
    public RetryLimiterRegistry grpcRetryLimiterRegistry() {
        return new RetryLimiterRegistry();
    }

    /** Applies the engine to every net.devh channel builder. */
    @Bean
    public GrpcRetryChannelConfigurer grpcRetryChannelConfigurer(GrpcRetryProperties properties,
            ChannelRetryConfigs grpcRetryChannelConfigs, ObjectProvider<GrpcChannelsProperties> channelsProperties) {
        // engine=interceptor: the interceptor engine's installer is the third argument.
        return new GrpcRetryChannelConfigurer(grpcRetryChannelConfigs, properties.getEngine(), null,
                channelsProperties.getIfAvailable());
    }
}
