package io.github.grpcretry.spring;

import io.github.grpcretry.integration.GrpcDeadlineHttpFilter;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.Ordered;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.StringUtils;

/**
 * How both lines register the HTTP deadline filter ({@code grpc.retry.deadline.http.header}): early in the
 * servlet filter chain, so the whole request handling runs with the deadline, and only while the header
 * property has text ({@link OnHttpHeaderCondition}).
 */
public final class GrpcDeadlineHttpRegistration {

    /** Order of the HTTP filter: early, so the whole request handling runs with the deadline. */
    public static final int HTTP_FILTER_ORDER = Ordered.HIGHEST_PRECEDENCE + 10;

    private GrpcDeadlineHttpRegistration() {
    }

    /** The registration of {@code filter}, named {@code grpcDeadlineHttpFilter}. */
    public static FilterRegistrationBean<GrpcDeadlineHttpFilter> of(GrpcDeadlineHttpFilter filter) {
        FilterRegistrationBean<GrpcDeadlineHttpFilter> registration = new FilterRegistrationBean<>(filter);
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
