package io.github.grpcretry.springgrpc.actuate;

import io.github.grpcretry.spring.GrpcRetryEndpoint;
import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.spring.report.RetryReport;
import io.github.grpcretry.springgrpc.GrpcRetryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Actuator on Spring Boot 4: the {@code grpcRetry} health contributor (Spring Boot's
 * {@code org.springframework.boot.health.contributor} API, {@code management.health.grpcretry.enabled})
 * and the read-only {@code grpcretry} endpoint, both from the {@link RetryReport}.
 */
@AutoConfiguration(after = GrpcRetryAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint")
@ConditionalOnBean(RetryReport.class)
public class GrpcRetryActuatorAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    @ConditionalOnEnabledHealthIndicator("grpcretry")
    static class Health {

        @Bean
        @ConditionalOnMissingBean(name = "grpcRetryHealthIndicator")
        GrpcRetryHealthIndicator grpcRetryHealthIndicator(RetryReport report, GrpcRetryProperties properties) {
            return new GrpcRetryHealthIndicator(report, properties.health().statusWhenThrottled());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
    @ConditionalOnAvailableEndpoint(GrpcRetryEndpoint.class)
    static class EndpointConfiguration {

        @Bean
        @ConditionalOnMissingBean
        GrpcRetryEndpoint grpcRetryEndpoint(RetryReport report) {
            return new GrpcRetryEndpoint(report);
        }
    }
}
