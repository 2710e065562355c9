package io.github.grpcretry.autoconfigure.actuate;

import io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled;
import io.github.grpcretry.autoconfigure.metrics.GrpcRetryEventsAutoConfiguration;
import io.github.grpcretry.autoconfigure.metrics.GrpcRetryObservabilitySettings;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.attempt.AdaptiveHedgingRegistry;
import io.github.grpcretry.integration.ChannelStateSource;
import io.github.grpcretry.integration.PolicySources;
import io.github.grpcretry.integration.RetryStatistics;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@code grpcRetry} health contributor (bean {@code grpcRetryHealthIndicator}), unless
 * {@code management.health.grpcRetry.enabled=false}.
 */
@AutoConfiguration(
        after = GrpcRetryEventsAutoConfiguration.class,
        beforeName = "org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration")
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnEnabledHealthIndicator("grpcRetry")
@ConditionalOnGrpcRetryEnabled
public class GrpcRetryHealthContributorAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "grpcRetryHealthIndicator")
    public GrpcRetryHealthIndicator grpcRetryHealthIndicator(ObjectProvider<GrpcRetryObservabilitySettings> settings,
            ObjectProvider<ChannelRetryConfigs> configs, ObjectProvider<RetryLimiterRegistry> limiters,
            ObjectProvider<RetryStatistics> statistics, ObjectProvider<ChannelStateSource> states,
            ObjectProvider<PolicySources> policySources, ObjectProvider<AdaptiveHedgingRegistry> adaptiveHedging) {
        return new GrpcRetryHealthIndicator(
                GrpcRetryEndpointAutoConfiguration.report(settings, configs, limiters, statistics, states, policySources,
                        adaptiveHedging),
                settings.getIfAvailable(() -> new GrpcRetryObservabilitySettings(null, null)).statusWhenThrottled());
    }
}
