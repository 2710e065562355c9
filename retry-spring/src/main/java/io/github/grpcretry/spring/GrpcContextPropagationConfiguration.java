package io.github.grpcretry.spring;

import io.github.grpcretry.deadline.GrpcContextPropagation;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The gRPC {@code Context} registered with Micrometer's context-propagation (key {@code grpc.context})
 * when it is on the class path, so Spring's {@code ContextPropagatingTaskDecorator} carries deadlines and
 * cancellation into {@code @Async} work. The same on both lines (each line's auto-configuration imports it).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = "io.micrometer.context.ContextRegistry")
public class GrpcContextPropagationConfiguration {

    @Bean
    io.micrometer.context.ThreadLocalAccessor<io.grpc.Context> grpcContextThreadLocalAccessor() {
        io.micrometer.context.ThreadLocalAccessor<io.grpc.Context> accessor = GrpcContextPropagation.threadLocalAccessor();
        io.micrometer.context.ContextRegistry.getInstance().registerThreadLocalAccessor(accessor);
        return accessor;
    }
}
