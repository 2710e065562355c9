package io.github.grpcretry.springgrpc;

import io.github.grpcretry.deadline.DeadlineClientInterceptor;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.spring.channel.ChannelSetup;
import io.github.grpcretry.spring.reload.PolicySources;
import io.github.grpcretry.spring.reload.ReloadableChannels;
import io.grpc.ManagedChannelBuilder;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.grpc.client.GrpcChannelBuilderCustomizer;

/**
 * Runs for every channel a Spring gRPC channel factory builds, with the channel's name: puts the
 * {@link ChannelTagInterceptor} on it (learning the target grpc-java canonicalized when it builds the
 * channel, {@link ChannelTargets}; outermost: Spring gRPC runs builder customizers after it added
 * the global interceptors, and grpc-java runs the interceptor added last first), sets the connect
 * timeout, and for {@code engine: native} grpc-java's retry settings (enable, caps, buffers), for
 * {@code engine: interceptor} grpc-java's caps of one attempt (so nothing retries underneath the engine);
 * and puts a service config the channel's name resolver supplies under {@link PolicySources}' control.
 * The channel's default service config goes through {@link GrpcRetryServiceConfigCustomizer} instead,
 * because Spring Boot sets the default service config last.
 */
final class GrpcRetryChannelCustomizer<T extends ManagedChannelBuilder<T>> implements GrpcChannelBuilderCustomizer<T> {

    private final ReloadableChannels configs;
    private final ChannelSetup.Engine engine;
    private final BootChannelProperties boot;
    private final @Nullable Duration defaultTimeout;
    private final PolicySources policySources;
    private final ChannelTargets targets;

    GrpcRetryChannelCustomizer(ReloadableChannels configs, ChannelSetup.Engine engine, BootChannelProperties boot,
            @Nullable Duration defaultTimeout, PolicySources policySources, ChannelTargets targets) {
        this.configs = Objects.requireNonNull(configs, "configs");
        this.engine = Objects.requireNonNull(engine, "engine");
        this.boot = Objects.requireNonNull(boot, "boot");
        this.defaultTimeout = defaultTimeout;
        this.policySources = Objects.requireNonNull(policySources, "policySources");
        this.targets = Objects.requireNonNull(targets, "targets");
    }

    @Override
    public void customize(String target, T builder) {
        ChannelRetryConfig config = configs.built(target);
        if (engine == ChannelSetup.Engine.NATIVE) {
            ChannelSetup.configure(builder, config, engine);
        } else {
            ChannelSetup.capUnderlyingRetries(builder);
            ChannelSetup.applyConnectTimeout(builder, config.connectTimeout());
        }
        policySources.install(builder, target, () -> configs.ownConfig(target));
        ChannelTagInterceptor tag = tagFor(target, config);
        tag.building(); // SpringGrpcChannelStates hands it the ManagedChannel the factory returns
        ChannelSetup.interceptWithTarget(builder, target, canonical -> {
            targets.built(target, canonical);
            return tag;
        });
    }

    ChannelTagInterceptor tagFor(String channel, ChannelRetryConfig config) {
        return new ChannelTagInterceptor(channel,
                ChannelTagInterceptor.combinedDefault(boot.defaultDeadline(channel), defaultTimeout),
                DeadlineClientInterceptor.methodTimeouts(config.serviceConfig()));
    }
}
