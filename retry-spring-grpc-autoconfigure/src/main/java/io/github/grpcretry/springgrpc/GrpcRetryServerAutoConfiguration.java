package io.github.grpcretry.springgrpc;

import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.spring.RetryEventListeners;
import io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled;
import io.github.grpcretry.spring.StatusCodeBinding;
import io.github.grpcretry.deadline.DeadlineServerInterceptor;
import io.github.grpcretry.guard.GuardEventListener;
import io.github.grpcretry.guard.GuardServerInterceptor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;
import org.springframework.grpc.server.GlobalServerInterceptor;

/**
 * The server side on Spring gRPC's server: the guard and the deadline server interceptors as
 * {@code @GlobalServerInterceptor} beans. Spring gRPC applies global server interceptors in bean order,
 * the first outermost; both run outside Spring Boot's observation interceptor (order 0) and Spring
 * gRPC's exception-handling interceptor (order 1), so they see the status that exception handling
 * turned an application exception into, and the guard (outermost) sees the status that goes on the wire.
 */
@AutoConfiguration
@ConditionalOnClass(name = {"org.springframework.grpc.server.GlobalServerInterceptor",
        "org.springframework.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration"})
@ConditionalOnGrpcRetryEnabled
@EnableConfigurationProperties(GrpcRetryProperties.class)
@Import(StatusCodeBinding.class)
public class GrpcRetryServerAutoConfiguration {

    /** Order of the guard among global server interceptors: outermost of the starter's. */
    public static final int GUARD_ORDER = -2000;

    /** Order of the deadline interceptor: inside the guard, outside observation (0) and exception handling (1). */
    public static final int DEADLINE_ORDER = -1000;

    @Bean
    @GlobalServerInterceptor
    @Order(GUARD_ORDER)
    @ConditionalOnBooleanProperty(name = "grpc.retry.guard.enabled", matchIfMissing = true)
    GuardServerInterceptor grpcRetryGuardServerInterceptor(ObjectProvider<GuardEventListener> listeners) {
        return new GuardServerInterceptor(RetryEventListeners.guard(listeners.orderedStream().toList()));
    }

    @Bean
    @GlobalServerInterceptor
    @Order(DEADLINE_ORDER)
    DeadlineServerInterceptor grpcDeadlineServerInterceptor() {
        return new DeadlineServerInterceptor();
    }
}
