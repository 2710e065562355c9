package io.github.grpcretry.springgrpc;

import io.github.grpcretry.deadline.DeadlineClientInterceptor;
import io.github.grpcretry.integration.ChannelSetup;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.grpc.ManagedChannelBuilder;
import java.time.Duration;
import java.util.Objects;
import org.springframework.grpc.client.GrpcChannelBuilderCustomizer;

/**
 * Runs for every channel a Spring gRPC channel factory builds, with the channel's name: puts the
 * {@link ChannelTagInterceptor} on it (outermost: Spring gRPC runs builder customizers after it added
 * the global interceptors, and grpc-java runs the interceptor added last first), sets the connect
 * timeout, and for {@code engine: native} grpc-java's retry settings (enable, caps, buffers). The
 * channel's service config goes through {@link GrpcRetryServiceConfigCustomizer} instead, because
 * Spring Boot sets the default service config last.
 */
final class GrpcRetryChannelCustomizer<T extends ManagedChannelBuilder<T>> implements GrpcChannelBuilderCustomizer<T> {

    private final ChannelRetryConfigs configs;
    private final ChannelSetup.Engine engine;
    private final BootChannelProperties boot;
    private final Duration defaultTimeout;

    GrpcRetryChannelCustomizer(ChannelRetryConfigs configs, ChannelSetup.Engine engine, BootChannelProperties boot,
            Duration defaultTimeout) {
        this.configs = Objects.requireNonNull(configs, "configs");
        this.engine = Objects.requireNonNull(engine, "engine");
        this.boot = Objects.requireNonNull(boot, "boot");
        this.defaultTimeout = defaultTimeout;
    }

    @Override
    public void customize(String target, T builder) {
        ChannelRetryConfig config = configs.forChannel(target);
        if (engine == ChannelSetup.Engine.NATIVE) {
            ChannelSetup.configure(builder, config, engine);
        } else {
            ChannelSetup.applyConnectTimeout(builder, config.connectTimeout());
        }
        builder.intercept(tagFor(target, config));
    }

    ChannelTagInterceptor tagFor(String channel, ChannelRetryConfig config) {
        return new ChannelTagInterceptor(channel,
                ChannelTagInterceptor.combinedDefault(boot.defaultDeadline(channel), defaultTimeout),
                DeadlineClientInterceptor.methodTimeouts(config.serviceConfig()));
    }
}
