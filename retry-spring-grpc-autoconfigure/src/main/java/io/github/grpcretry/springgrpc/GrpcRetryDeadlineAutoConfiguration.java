package io.github.grpcretry.springgrpc;

import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.spring.GrpcDeadlineHttpRegistration;
import io.github.grpcretry.spring.GrpcContextPropagationConfiguration;
import io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled;
import io.github.grpcretry.spring.StatusCodeBinding;
import io.github.grpcretry.integration.GrpcDeadlineHttpFilter;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * Deadline propagation beyond the gRPC channels: the HTTP ingress filter on Spring Boot 4's servlet
 * stack ({@code grpc.retry.deadline.http.header}), and the gRPC {@code Context} registered with
 * Micrometer's context-propagation (key {@code grpc.context}), so Spring's
 * {@code ContextPropagatingTaskDecorator} carries deadlines and cancellation into {@code @Async} work.
 */
@AutoConfiguration
@ConditionalOnGrpcRetryEnabled
@EnableConfigurationProperties(GrpcRetryProperties.class)
@Import({StatusCodeBinding.class, GrpcContextPropagationConfiguration.class})
public class GrpcRetryDeadlineAutoConfiguration {

    /** Order of the HTTP filter: early, so the whole request handling runs with the deadline. */
    public static final int HTTP_FILTER_ORDER = GrpcDeadlineHttpRegistration.HTTP_FILTER_ORDER;

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @ConditionalOnClass(name = "jakarta.servlet.Filter")
    @Conditional(GrpcDeadlineHttpRegistration.OnHttpHeaderCondition.class)
    static class HttpConfiguration {

        @Bean
        GrpcDeadlineHttpFilter grpcDeadlineHttpFilter(GrpcRetryProperties properties) {
            properties.deadline().settings();
            return new GrpcDeadlineHttpFilter(properties.deadline().http().header(), properties.deadline().http().max());
        }

        @Bean
        FilterRegistrationBean<GrpcDeadlineHttpFilter> grpcDeadlineHttpFilterRegistration(GrpcDeadlineHttpFilter filter) {
            return GrpcDeadlineHttpRegistration.of(filter);
        }
    }
}
