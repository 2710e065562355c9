package io.github.grpcretry.autoconfigure.actuate;

import io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled;
import io.github.grpcretry.autoconfigure.metrics.GrpcRetryEventsAutoConfiguration;
import io.github.grpcretry.autoconfigure.metrics.GrpcRetryObservabilitySettings;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.integration.ChannelStateSource;
import io.github.grpcretry.integration.PolicySources;
import io.github.grpcretry.integration.RetryStatistics;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code grpcRetry} health contributor (bean {@code grpcRetryHealthIndicator}), unless
 * {@code management.health.grpcRetry.enabled=false}.
 */
@AutoConfiguration(
        after = GrpcRetryEventsAutoConfiguration.class,
        beforeName = "org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration")
@ConditionalOnClass(name = {"org.springframework.boot.actuate.health.HealthIndicator",
        "org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator"})
@ConditionalOnGrpcRetryEnabled
public class GrpcRetryHealthContributorAutoConfiguration {

    /** Nested, so its condition's class is only loaded once the Actuator's auto-configuration is known to be there. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnEnabledHealthIndicator("grpcRetry")
    static class Enabled {

        @Bean
        @ConditionalOnMissingBean(name = "grpcRetryHealthIndicator")
        GrpcRetryHealthIndicator grpcRetryHealthIndicator(ObjectProvider<GrpcRetryObservabilitySettings> settings,
                ObjectProvider<ChannelRetryConfigs> configs, ObjectProvider<RetryLimiterRegistry> limiters,
                ObjectProvider<RetryStatistics> statistics, ObjectProvider<ChannelStateSource> states,
                ObjectProvider<PolicySources> policySources) {
            return new GrpcRetryHealthIndicator(
                    GrpcRetryEndpointAutoConfiguration.report(settings, configs, limiters, statistics, states, policySources),
                    settings.getIfAvailable(() -> new GrpcRetryObservabilitySettings(null, null)).statusWhenThrottled());
        }
    }
}
