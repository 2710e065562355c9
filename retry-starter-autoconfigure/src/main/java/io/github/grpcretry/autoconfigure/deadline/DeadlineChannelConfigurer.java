package io.github.grpcretry.autoconfigure.deadline;

import io.github.grpcretry.deadline.DeadlineClientInterceptor;
import io.github.grpcretry.deadline.DeadlineEventListener;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.grpc.ManagedChannelBuilder;
import java.util.function.Supplier;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;

/**
 * Adds a {@link DeadlineClientInterceptor} to every net.devh channel builder. grpc-java runs builder
 * interceptors in the reverse order of {@code intercept} calls (the last one added runs first), so
 * this configurer runs late ({@link #ORDER}): after the retry engine's configurer, which makes the
 * deadline rules run outside (before) the engine and bound the whole retry sequence.
 */
public class DeadlineChannelConfigurer implements GrpcChannelConfigurer, Ordered {

    /** After every configurer with a lower order value, in particular the retry engine's. */
    public static final int ORDER = Ordered.LOWEST_PRECEDENCE - 100;

    private final DeadlineClientInterceptor.Settings settings;
    private final Supplier<ChannelRetryConfigs> channelConfigs;
    private final @Nullable DeadlineEventListener listener;

    /**
     * @param channelConfigs the channels' effective service configs (for per-method timeouts); may
     *     supply null
     * @param listener events for meters, or null
     */
    public DeadlineChannelConfigurer(DeadlineClientInterceptor.Settings settings, Supplier<ChannelRetryConfigs> channelConfigs,
            @Nullable DeadlineEventListener listener) {
        this.settings = settings;
        this.channelConfigs = channelConfigs == null ? () -> null : channelConfigs;
        this.listener = listener;
    }

    /** The interceptor this configurer installs on {@code channel}. */
    public DeadlineClientInterceptor interceptorFor(String channel) {
        ChannelRetryConfigs configs = channelConfigs.get();
        ChannelRetryConfig config = configs == null ? null : configs.forChannel(channel);
        return new DeadlineClientInterceptor(channel, settings,
                config == null ? null : DeadlineClientInterceptor.methodTimeouts(config.serviceConfig()), listener);
    }

    @Override
    public void accept(ManagedChannelBuilder<?> builder, String channel) {
        builder.intercept(interceptorFor(channel));
    }

    @Override
    public int getOrder() {
        return ORDER;
    }
}
