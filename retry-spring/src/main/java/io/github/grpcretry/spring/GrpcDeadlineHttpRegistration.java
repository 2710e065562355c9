package io.github.grpcretry.spring;

import io.github.grpcretry.spring.web.GrpcDeadlineHttpFilter;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.StringUtils;

/**
 * The HTTP deadline filter of both lines (each line's auto-configuration imports it): in a
 * servlet web application, while {@code grpc.retry.deadline.http.header} has text
 * ({@link OnHttpHeaderCondition}), the filter registered early in the servlet filter chain, so the whole
 * request handling runs with the deadline.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(name = "jakarta.servlet.Filter")
@Conditional(GrpcDeadlineHttpRegistration.OnHttpHeaderCondition.class)
public class GrpcDeadlineHttpRegistration {

    /** Order of the HTTP filter: early, so the whole request handling runs with the deadline. */
    public static final int HTTP_FILTER_ORDER = Ordered.HIGHEST_PRECEDENCE + 10;

    /** The filter, from the checked {@code grpc.retry.deadline.*} values. */
    @Bean
    public GrpcDeadlineHttpFilter grpcDeadlineHttpFilter(GrpcRetryProperties properties) {
        properties.deadline().settings();
        return new GrpcDeadlineHttpFilter(properties.deadline().http().header(), properties.deadline().http().max());
    }

    /** The filter's registration, named {@code grpcDeadlineHttpFilter}. */
    @Bean
    public FilterRegistrationBean<GrpcDeadlineHttpFilter> grpcDeadlineHttpFilterRegistration(
            GrpcDeadlineHttpFilter grpcDeadlineHttpFilter) {
        FilterRegistrationBean<GrpcDeadlineHttpFilter> registration = new FilterRegistrationBean<>(grpcDeadlineHttpFilter);
        registration.setOrder(HTTP_FILTER_ORDER);
        registration.setName("grpcDeadlineHttpFilter");
        return registration;
    }

    /** Matches when {@code grpc.retry.deadline.http.header} has text. */
    public static class OnHttpHeaderCondition extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            String header = context.getEnvironment().getProperty("grpc.retry.deadline.http.header");
            return StringUtils.hasText(header)
                    ? ConditionOutcome.match("grpc.retry.deadline.http.header is '" + header.trim() + "'")
                    : ConditionOutcome.noMatch("grpc.retry.deadline.http.header is not set");
        }
    }
}
