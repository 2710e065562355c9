package io.github.grpcretry.autoconfigure.actuate;

import io.github.grpcretry.autoconfigure.metrics.GrpcRetryEventsAutoConfiguration;
import io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled;
import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.spring.report.RetryReport;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code grpcRetry} health contributor (bean {@code grpcRetryHealthIndicator}) over the
 * {@link RetryReport}, unless {@code management.health.grpcretry.enabled=false}.
 */
@AutoConfiguration(
        after = GrpcRetryEventsAutoConfiguration.class,
        beforeName = "org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration")
@ConditionalOnClass(name = {"org.springframework.boot.actuate.health.HealthIndicator",
        "org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator"})
@ConditionalOnGrpcRetryEnabled
@ConditionalOnBean(RetryReport.class)
public class GrpcRetryHealthContributorAutoConfiguration {

    /** Nested, so its condition's class is only loaded once the Actuator's auto-configuration is known to be there. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnEnabledHealthIndicator("grpcretry")
    static class Enabled {

        @Bean
        @ConditionalOnMissingBean(name = "grpcRetryHealthIndicator")
        GrpcRetryHealthIndicator grpcRetryHealthIndicator(RetryReport report, GrpcRetryProperties properties) {
            return new GrpcRetryHealthIndicator(report, properties.health().statusWhenThrottled());
        }
    }
}
