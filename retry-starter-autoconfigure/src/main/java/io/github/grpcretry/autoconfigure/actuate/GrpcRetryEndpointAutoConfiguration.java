package io.github.grpcretry.autoconfigure.actuate;

import io.github.grpcretry.autoconfigure.metrics.GrpcRetryEventsAutoConfiguration;
import io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled;
import io.github.grpcretry.spring.GrpcRetryEndpoint;
import io.github.grpcretry.spring.report.RetryReport;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The read-only {@code grpcretry} endpoint (bean {@code grpcRetryEndpoint}) over the {@link RetryReport}
 * when it is available (exposed, e.g. {@code management.endpoints.web.exposure.include=health,grpcretry}).
 */
@AutoConfiguration(after = GrpcRetryEventsAutoConfiguration.class)
@ConditionalOnClass(name = {"org.springframework.boot.actuate.endpoint.annotation.Endpoint",
        "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"})
@ConditionalOnGrpcRetryEnabled
@ConditionalOnBean(RetryReport.class)
public class GrpcRetryEndpointAutoConfiguration {

    /** Nested, so its condition's class is only loaded once the Actuator's auto-configuration is known to be there. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnAvailableEndpoint(endpoint = GrpcRetryEndpoint.class)
    static class Available {

        @Bean
        @ConditionalOnMissingBean
        GrpcRetryEndpoint grpcRetryEndpoint(RetryReport report) {
            return new GrpcRetryEndpoint(report);
        }
    }
}
