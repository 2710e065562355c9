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
 * {@code engine: native}. Health checking is left as Boot rendered it; with the interceptor engine Boot's load
 * balancing ({@code service-config.loadbalancing}, else {@code default.load-balancing-policy}, default
 * {@code round_robin}) becomes the child of the starter's policy that sends a retry or a hedge to a backend the call
 * has not tried ({@link ChannelSetup#withTriedBackends}).
 */
final class GrpcRetryServiceConfigCustomizer implements GrpcClientDefaultServiceConfigCustomizer {

    private final ChannelRetryConfigs configs;
    private final ChannelSetup.Engine engine;
    private final BootChannelProperties boot;

    GrpcRetryServiceConfigCustomizer(ChannelRetryConfigs configs, ChannelSetup.Engine engine, BootChannelProperties boot) {
        this.configs = Objects.requireNonNull(configs, "configs");
        this.engine = Objects.requireNonNull(engine, "engine");
        this.boot = Objects.requireNonNull(boot, "boot");
    }

    @Override
    public void customize(String target, Map<String, Object> defaultServiceConfig) {
        Map<String, Object> rendered = ChannelSetup.serviceConfigMap(configs.forChannel(target), engine);
        defaultServiceConfig.remove("methodConfig");
        defaultServiceConfig.remove("retryThrottling");
        defaultServiceConfig.putAll(rendered);
        // Boot's service-config.loadbalancing, else its default.load-balancing-policy, under the starter's policy
        Map<String, Object> balanced = ChannelSetup.withTriedBackends(defaultServiceConfig, engine, boot.defaultPolicy(target));
        defaultServiceConfig.clear();
        defaultServiceConfig.putAll(balanced);
    }
}
