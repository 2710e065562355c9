package io.github.grpcretry.springgrpc;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.spring.channel.ChannelSetup;
import java.util.Map;
import java.util.Objects;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientDefaultServiceConfigCustomizer;

/**
 * Takes over the retry parts of the default service config Spring Boot renders for a channel from
 * {@code spring.grpc.client.channel.<name>.service-config}: Boot's values are the base layer of the
 * channel's configuration ({@link SpringGrpcRetryConfigs}), so this customizer replaces the map's
 * {@code methodConfig} and {@code retryThrottling} with the channel's merged configuration: without
 * retry, hedging and throttling for the interceptor engine (timeouts, wait-for-ready and message limits
 * stay, and grpc-java's transparent retry stays on: nothing is retried twice), with them for
 * {@code engine: native}. Load balancing and health checking are left as Boot rendered them.
 */
final class GrpcRetryServiceConfigCustomizer implements GrpcClientDefaultServiceConfigCustomizer {

    private final ChannelRetryConfigs configs;
    private final ChannelSetup.Engine engine;

    GrpcRetryServiceConfigCustomizer(ChannelRetryConfigs configs, ChannelSetup.Engine engine) {
        this.configs = Objects.requireNonNull(configs, "configs");
        this.engine = Objects.requireNonNull(engine, "engine");
    }

    @Override
    public void customize(String target, Map<String, Object> defaultServiceConfig) {
        Map<String, Object> rendered = ChannelSetup.serviceConfigMap(configs.forChannel(target), engine);
        defaultServiceConfig.remove("methodConfig");
        defaultServiceConfig.remove("retryThrottling");
        defaultServiceConfig.putAll(rendered);
    }
}
