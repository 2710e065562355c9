package io.github.grpcretry.autoconfigure.actuate;

import io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled;
import io.github.grpcretry.spring.GrpcRetryEndpoint;
import io.github.grpcretry.autoconfigure.metrics.GrpcRetryEventsAutoConfiguration;
import io.github.grpcretry.autoconfigure.metrics.GrpcRetryObservabilitySettings;
import io.github.grpcretry.integration.ChannelSetup;
import io.github.grpcretry.integration.ChannelStateSource;
import io.github.grpcretry.integration.PolicySources;
import io.github.grpcretry.integration.RetryReport;
import io.github.grpcretry.integration.RetryStatistics;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The read-only {@code grpcretry} endpoint (bean {@code grpcRetryEndpoint}) when it is available
 * (exposed, e.g. {@code management.endpoints.web.exposure.include=health,grpcretry}).
 */
@AutoConfiguration(after = GrpcRetryEventsAutoConfiguration.class)
@ConditionalOnClass(name = {"org.springframework.boot.actuate.endpoint.annotation.Endpoint",
        "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"})
@ConditionalOnGrpcRetryEnabled
public class GrpcRetryEndpointAutoConfiguration {

    /** Nested, so its condition's class is only loaded once the Actuator's auto-configuration is known to be there. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnAvailableEndpoint(endpoint = GrpcRetryEndpoint.class)
    static class Available {

        @Bean
        @ConditionalOnMissingBean
        GrpcRetryEndpoint grpcRetryEndpoint(ObjectProvider<GrpcRetryObservabilitySettings> settings,
                ObjectProvider<ChannelRetryConfigs> configs, ObjectProvider<RetryLimiterRegistry> limiters,
                ObjectProvider<RetryStatistics> statistics, ObjectProvider<ChannelStateSource> states,
                ObjectProvider<PolicySources> policySources) {
            return new GrpcRetryEndpoint(report(settings, configs, limiters, statistics, states, policySources));
        }
    }

    /** The report health and the endpoint read, from the beans that exist when asked. */
    static RetryReport report(ObjectProvider<GrpcRetryObservabilitySettings> settings,
            ObjectProvider<ChannelRetryConfigs> configs, ObjectProvider<RetryLimiterRegistry> limiters,
            ObjectProvider<RetryStatistics> statistics, ObjectProvider<ChannelStateSource> states,
            ObjectProvider<PolicySources> policySources) {
        boolean isNative = settings.getIfAvailable(() -> new GrpcRetryObservabilitySettings(null, null)).isNative();
        return new RetryReport(isNative ? ChannelSetup.Engine.NATIVE : ChannelSetup.Engine.INTERCEPTOR,
                configs::getIfAvailable, limiters::getIfAvailable, statistics::getIfAvailable, states::getIfAvailable,
                policySources::getIfAvailable);
    }
}
