package io.github.grpcretry.autoconfigure.metrics;

import io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled;
import org.springframework.context.annotation.Import;
import io.github.grpcretry.spring.GrpcRetryEventsConfiguration;
import io.github.grpcretry.integration.ChannelStateSource;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import net.devh.boot.grpc.client.config.GrpcChannelsProperties;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The engine's one event listener and what every observer shares: the counts since start and the
 * composite {@code grpcRetryEventListener} the engine is given ({@link GrpcRetryEventsConfiguration}), the
 * observability settings and the channels' connectivity states (from net.devh's
 * {@code GrpcChannelFactory} when it is present). Needs neither Micrometer nor the Actuator.
 */
@AutoConfiguration
@ConditionalOnGrpcRetryEnabled
@Import(GrpcRetryEventsConfiguration.class)
public class GrpcRetryEventsAutoConfiguration {

    /** Name of the composite listener bean the engine is given. */
    public static final String EVENT_LISTENER_BEAN = GrpcRetryEventsConfiguration.EVENT_LISTENER_BEAN;

    @Bean
    @ConditionalOnMissingBean
    public GrpcRetryObservabilitySettings grpcRetryObservabilitySettings(Environment environment) {
        return GrpcRetryObservabilitySettings.from(environment);
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
