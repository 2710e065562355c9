package io.github.grpcretry.autoconfigure;

import io.github.grpcretry.autoconfigure.deadline.DeadlineChannelConfigurer;
import io.github.grpcretry.guard.GuardClientInterceptor;
import io.github.grpcretry.guard.GuardEventListener;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannelBuilder;
import io.grpc.MethodDescriptor;
import java.util.Objects;
import java.util.function.Function;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import org.springframework.core.Ordered;

/**
 * Adds a {@link GuardClientInterceptor} to every net.devh channel builder. An interceptor added to a
 * builder later runs earlier (outside), so with {@link #ORDER} between the engine's configurer
 * ({@link GrpcRetryChannelConfigurer#ORDER}) and the deadline configurer
 * ({@link DeadlineChannelConfigurer#ORDER}) the guard sees each logical call's outcome after the
 * engine's retries, and a call the deadline rules refuse before it is sent never reaches it.
 */
public class GuardChannelConfigurer implements GrpcChannelConfigurer, Ordered {

    /** After the engine's configurer, before the deadline configurer. */
    public static final int ORDER = GrpcRetryChannelConfigurer.ORDER + 1000;

    private final Function<String, ChannelRetryConfig> configs;
    private final GuardEventListener events;

    /**
     * @param configs the effective configuration of the channel net.devh builds under a given name
     *     (may return null: the guard then only passes a downstream "stop" on)
     * @param events guard events, or null
     */
    public GuardChannelConfigurer(Function<String, ChannelRetryConfig> configs, GuardEventListener events) {
        this.configs = Objects.requireNonNull(configs, "configs");
        this.events = events == null ? GuardEventListener.NOOP : events;
    }

    /**
     * The interceptor this configurer installs on the channel net.devh builds as {@code builderName}: a
     * {@link GuardClientInterceptor} of the channel's current configuration, made again when a run-time
     * reload changed it (each call reads it once, when it starts).
     */
    public ClientInterceptor interceptorFor(String builderName) {
        return new Following(builderName);
    }

    @Override
    public void accept(ManagedChannelBuilder<?> builder, String builderName) {
        builder.intercept(interceptorFor(builderName));
    }

    /** The guard of one channel, following its configuration. */
    private final class Following implements ClientInterceptor {
        private final String builderName;
        private volatile Current current;

        Following(String builderName) {
            this.builderName = builderName;
            ChannelRetryConfig config = configs.apply(builderName);
            this.current = new Current(config, new GuardClientInterceptor(config, events));
        }

        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                CallOptions callOptions, Channel next) {
            Current c = current;
            ChannelRetryConfig config = configs.apply(builderName);
            if (config != c.config) {
                c = new Current(config, new GuardClientInterceptor(config, events));
                current = c;
            }
            return c.guard.interceptCall(method, callOptions, next);
        }
    }

    private record Current(ChannelRetryConfig config, GuardClientInterceptor guard) {
    }

    @Override
    public int getOrder() {
        return ORDER;
    }
}
