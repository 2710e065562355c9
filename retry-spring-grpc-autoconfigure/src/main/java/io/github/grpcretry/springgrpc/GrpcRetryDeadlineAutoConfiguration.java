package io.github.grpcretry.springgrpc;

import io.github.grpcretry.spring.GrpcDeadlineHttpRegistration;
import io.github.grpcretry.spring.GrpcContextPropagationConfiguration;
import io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled;
import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.spring.StatusCodeBinding;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Import;

/**
 * Deadline propagation beyond the gRPC channels: the HTTP ingress filter on Spring Boot 4's servlet
 * stack ({@code grpc.retry.deadline.http.header}), and the gRPC {@code Context} registered with
 * Micrometer's context-propagation (key {@code grpc.context}), so Spring's
 * {@code ContextPropagatingTaskDecorator} carries deadlines and cancellation into {@code @Async} work.
 */
@AutoConfiguration
@ConditionalOnGrpcRetryEnabled
@EnableConfigurationProperties(GrpcRetryProperties.class)
@Import({StatusCodeBinding.class, GrpcContextPropagationConfiguration.class, GrpcDeadlineHttpRegistration.class})
public class GrpcRetryDeadlineAutoConfiguration {

    /** Order of the HTTP filter: early, so the whole request handling runs with the deadline. */
    public static final int HTTP_FILTER_ORDER = GrpcDeadlineHttpRegistration.HTTP_FILTER_ORDER;
}
