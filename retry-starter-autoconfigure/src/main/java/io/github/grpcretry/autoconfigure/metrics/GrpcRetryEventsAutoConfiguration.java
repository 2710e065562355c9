package io.github.grpcretry.autoconfigure.metrics;

import io.github.grpcretry.attempt.AdaptiveHedgingRegistry;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled;
import io.github.grpcretry.spring.GrpcRetryEventsConfiguration;
import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.spring.channel.StreamResumptions;
import io.github.grpcretry.spring.reload.PolicySources;
import io.github.grpcretry.spring.report.ChannelStateSource;
import io.github.grpcretry.spring.report.RetryReport;
import io.github.grpcretry.spring.report.RetryStatistics;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import net.devh.boot.grpc.client.config.GrpcChannelsProperties;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * The engine's one event listener and what every observer shares: the counts since start and the
 * composite {@code grpcRetryEventListener} the engine is given ({@link GrpcRetryEventsConfiguration}), the
 * report health and the endpoint read ({@code grpcRetryReport}) and the channels' connectivity states
 * (from net.devh's {@code GrpcChannelFactory} when it is present). Needs neither Micrometer nor the
 * Actuator.
 */
@AutoConfiguration
@ConditionalOnGrpcRetryEnabled
@EnableConfigurationProperties(GrpcRetryProperties.class)
@Import(GrpcRetryEventsConfiguration.class)
public class GrpcRetryEventsAutoConfiguration {

    /** Name of the composite listener bean the engine is given. */
    public static final String EVENT_LISTENER_BEAN = GrpcRetryEventsConfiguration.EVENT_LISTENER_BEAN;

    /** What health and the endpoint show of each channel, from the beans that exist when asked. */
    @Bean
    @ConditionalOnMissingBean
    public RetryReport grpcRetryReport(GrpcRetryProperties properties, ObjectProvider<ChannelRetryConfigs> configs,
            ObjectProvider<RetryLimiterRegistry> limiters, ObjectProvider<RetryStatistics> statistics,
            ObjectProvider<ChannelStateSource> states, ObjectProvider<PolicySources> policySources,
            ObjectProvider<AdaptiveHedgingRegistry> adaptiveHedging, ObjectProvider<StreamResumptions> resumptions) {
        return new RetryReport(properties.engine(), configs::getIfAvailable, limiters::getIfAvailable,
                statistics::getIfAvailable, states::getIfAvailable, policySources::getIfAvailable,
                adaptiveHedging::getIfAvailable, resumptions::getIfAvailable);
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(GrpcChannelFactory.class)
    static class NetDevhChannelStates {

        /** The states net.devh's channel factory reports ({@code getState(false)} of every channel it built). */
        @Bean
        @ConditionalOnMissingBean
        ChannelStateSource grpcRetryChannelStateSource(ObjectProvider<GrpcChannelFactory> factories,
                ObjectProvider<GrpcChannelsProperties> properties) {
            return new NetDevhChannelStateSource(factories, properties);
        }
    }
}
