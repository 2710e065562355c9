package io.github.grpcretry.autoconfigure.deadline;

import io.github.grpcretry.spring.GrpcDeadlineHttpRegistration;
import io.github.grpcretry.spring.RetryEventListeners;
import org.springframework.context.annotation.Import;
import io.github.grpcretry.spring.GrpcContextPropagationConfiguration;
import io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled;
import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.deadline.DeadlineEventListener;
import io.github.grpcretry.deadline.DeadlineServerInterceptor;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.core.task.TaskDecorator;

/**
 * Deadline propagation and cascade defence ({@code grpc.retry.deadline.*}, docs/design.md §9):
 * <ul>
 *   <li>{@code grpcDeadlineChannelConfigurer}: a net.devh {@code GrpcChannelConfigurer} adding the
 *       {@code DeadlineClientInterceptor} to every channel, outside the retry engine;</li>
 *   <li>{@code grpcContextTaskDecorator}: carries the gRPC Context into {@code @Async} methods and
 *       Spring Boot's task executors (backs off when the application has a TaskDecorator: Boot
 *       applies only a unique one; compose ours into yours, or use Spring's
 *       {@code ContextPropagatingTaskDecorator}, which carries the gRPC Context through the accessor
 *       registered here);</li>
 *   <li>{@code grpcContextThreadLocalAccessor}: registered with Micrometer's {@code ContextRegistry}
 *       (key {@code grpc.context}) when context-propagation is on the classpath;</li>
 *   <li>{@code grpcDeadlineServerInterceptor}: a net.devh global server interceptor (when the server
 *       starter is present) rejecting already-expired calls and mapping deadline-caused failures;</li>
 *   <li>{@code grpcDeadlineHttpFilter}: Spring MVC ingress when {@code grpc.retry.deadline.http.header}
 *       is set.</li>
 * </ul>
 */
@AutoConfiguration
@ConditionalOnGrpcRetryEnabled
@EnableConfigurationProperties(GrpcRetryProperties.class)
@Import({GrpcContextPropagationConfiguration.class, GrpcDeadlineHttpRegistration.class})
public class GrpcRetryDeadlineAutoConfiguration {

    /** Order of the server interceptor among net.devh global ones: after security, close to the handler. */
    public static final int SERVER_INTERCEPTOR_ORDER = 6000;

    /** Order of the HTTP filter: early, so the whole request handling runs with the deadline. */
    public static final int HTTP_FILTER_ORDER = GrpcDeadlineHttpRegistration.HTTP_FILTER_ORDER;

    @Bean
    @ConditionalOnMissingBean(TaskDecorator.class)
    public GrpcContextTaskDecorator grpcContextTaskDecorator() {
        return new GrpcContextTaskDecorator();
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer")
    static class ClientConfiguration {

        @Bean
        DeadlineChannelConfigurer grpcDeadlineChannelConfigurer(GrpcRetryProperties properties,
                ObjectProvider<ChannelRetryConfigs> channelConfigs, ObjectProvider<DeadlineEventListener> listeners) {
            return new DeadlineChannelConfigurer(properties.deadline().settings(), channelConfigs::getIfAvailable,
                    RetryEventListeners.deadlines(listeners.orderedStream().toList()));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor")
    static class ServerConfiguration {

        @Bean
        @GrpcGlobalServerInterceptor
        @Order(SERVER_INTERCEPTOR_ORDER)
        DeadlineServerInterceptor grpcDeadlineServerInterceptor() {
            return new DeadlineServerInterceptor();
        }
    }
}
