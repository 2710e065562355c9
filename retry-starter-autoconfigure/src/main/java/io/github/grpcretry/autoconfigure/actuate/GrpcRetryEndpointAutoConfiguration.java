package io.github.grpcretry.autoconfigure.actuate;

import io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled;
import io.github.grpcretry.spring.GrpcRetryEndpoint;
import io.github.grpcretry.autoconfigure.metrics.GrpcRetryEventsAutoConfiguration;
import io.github.grpcretry.autoconfigure.metrics.GrpcRetryObservabilitySettings;
import io.github.grpcretry.attempt.AdaptiveHedgingRegistry;
import io.github.grpcretry.integration.ChannelSetup;
import io.github.grpcretry.integration.ChannelStateSource;
import io.github.grpcretry.integration.PolicySources;
import io.github.grpcretry.integration.RetryReport;
import io.github.grpcretry.integration.RetryStatistics;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The read-only {@code grpcretry} endpoint (bean {@code grpcRetryEndpoint}) when it is available
 * (exposed, e.g. {@code management.endpoints.web.exposure.include=health,grpcretry}).
 */
@AutoConfiguration(after = GrpcRetryEventsAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnAvailableEndpoint(endpoint = GrpcRetryEndpoint.class)
@ConditionalOnGrpcRetryEnabled
public class GrpcRetryEndpointAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public GrpcRetryEndpoint grpcRetryEndpoint(ObjectProvider<GrpcRetryObservabilitySettings> settings,
            ObjectProvider<ChannelRetryConfigs> configs, ObjectProvider<RetryLimiterRegistry> limiters,
            ObjectProvider<RetryStatistics> statistics, ObjectProvider<ChannelStateSource> states,
            ObjectProvider<PolicySources> policySources, ObjectProvider<AdaptiveHedgingRegistry> adaptiveHedging) {
        return new GrpcRetryEndpoint(report(settings, configs, limiters, statistics, states, policySources,
                adaptiveHedging));
    }

    /** The report health and the endpoint read, from the beans that exist when asked. */
    static RetryReport report(ObjectProvider<GrpcRetryObservabilitySettings> settings,
            ObjectProvider<ChannelRetryConfigs> configs, ObjectProvider<RetryLimiterRegistry> limiters,
            ObjectProvider<RetryStatistics> statistics, ObjectProvider<ChannelStateSource> states,
            ObjectProvider<PolicySources> policySources, ObjectProvider<AdaptiveHedgingRegistry> adaptiveHedging) {
        boolean isNative = settings.getIfAvailable(() -> new GrpcRetryObservabilitySettings(null, null)).isNative();
        return new RetryReport(isNative ? ChannelSetup.Engine.NATIVE : ChannelSetup.Engine.INTERCEPTOR,
                configs::getIfAvailable, limiters::getIfAvailable, statistics::getIfAvailable, states::getIfAvailable,
                policySources::getIfAvailable, adaptiveHedging::getIfAvailable);
    }
}
