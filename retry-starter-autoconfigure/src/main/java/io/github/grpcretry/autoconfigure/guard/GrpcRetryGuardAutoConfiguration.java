package io.github.grpcretry.autoconfigure.guard;

import io.github.grpcretry.spring.RetryEventListeners;
import io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled;
import io.github.grpcretry.autoconfigure.GrpcRetryChannelConfigurer;
import io.github.grpcretry.autoconfigure.deadline.GrpcRetryDeadlineAutoConfiguration;
import io.github.grpcretry.guard.GuardEventListener;
import io.github.grpcretry.guard.GuardServerInterceptor;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.grpc.Status;
import java.util.List;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

/**
 * The cross-layer amplification guard ({@code grpc.retry.guard.enabled}, default true; docs/design.md §8):
 * <ul>
 *   <li>{@code grpcRetryGuardServerInterceptor}: a net.devh global server interceptor (when the
 *       server starter is present), ordered {@link #SERVER_INTERCEPTOR_ORDER}: outside net.devh's
 *       exception handling ({@code @GrpcAdvice}, order 0) and the deadline server interceptor
 *       ({@value GrpcRetryDeadlineAutoConfiguration#SERVER_INTERCEPTOR_ORDER}), so it sees the
 *       status that goes on the wire;</li>
 *   <li>{@code grpcRetryGuardChannelConfigurer}: a net.devh {@code GrpcChannelConfigurer} putting the
 *       {@code GuardClientInterceptor} on every channel, outside the retry engine (both engines).</li>
 * </ul>
 * Every {@link GuardEventListener} bean receives the guard's events; the bean {@code grpcRetryGuardMeters} (made by the
 * metrics auto-configuration when Micrometer is present) is one, counting {@code grpc.server.retry.guard}.
 */
@AutoConfiguration(afterName = {
        "io.github.grpcretry.autoconfigure.GrpcRetryAutoConfiguration",
        "io.github.grpcretry.autoconfigure.metrics.GrpcRetryMetricsAutoConfiguration"})
@ConditionalOnGrpcRetryEnabled
public class GrpcRetryGuardAutoConfiguration {

    /** Order among net.devh global server interceptors: before (outside) global exception handling at 0. */
    public static final int SERVER_INTERCEPTOR_ORDER = -1000;

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "grpc.retry.guard.enabled", matchIfMissing = true)
    @ConditionalOnClass(name = "net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor")
    static class ServerConfiguration {

        @Bean
        @GrpcGlobalServerInterceptor
        @Order(SERVER_INTERCEPTOR_ORDER)
        GuardServerInterceptor grpcRetryGuardServerInterceptor(ObjectProvider<GuardEventListener> listeners) {
            return new GuardServerInterceptor(RetryEventListeners.guard(listeners.orderedStream().toList()));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "grpc.retry.guard.enabled", matchIfMissing = true)
    @ConditionalOnClass(name = "net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer")
    static class ClientConfiguration {

        @Bean
        GuardChannelConfigurer grpcRetryGuardChannelConfigurer(ObjectProvider<ChannelRetryConfigs> configs,
                ObjectProvider<GrpcRetryChannelConfigurer> retryConfigurer,
                ObjectProvider<GuardEventListener> listeners) {
            return new GuardChannelConfigurer(builderName -> {
                ChannelRetryConfigs all = configs.getIfAvailable();
                if (all == null) {
                    return null;
                }
                GrpcRetryChannelConfigurer names = retryConfigurer.getIfAvailable();
                return all.forChannel(names == null ? builderName : names.channelName(builderName));
            }, RetryEventListeners.guard(listeners.orderedStream().toList()));
        }
    }
}
