package io.github.grpcretry.autoconfigure.metrics;

import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.integration.ChannelStateSource;
import io.github.grpcretry.integration.CompositeRetryEventListener;
import io.github.grpcretry.integration.RetryStatistics;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import net.devh.boot.grpc.client.config.GrpcChannelsProperties;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;

/**
 * The engine's one event listener and what every observer shares: the counts since start
 * ({@link RetryStatistics}), the composite {@code grpcRetryEventListener} the engine is given, the
 * observability settings and the channels' connectivity states (from net.devh's
 * {@code GrpcChannelFactory} when it is present). Needs neither Micrometer nor the Actuator.
 */
@AutoConfiguration
@ConditionalOnProperty(prefix = "grpc.retry", name = "enabled", havingValue = "true", matchIfMissing = true)
public class GrpcRetryEventsAutoConfiguration {

    /** Name of the composite listener bean the engine is given. */
    public static final String EVENT_LISTENER_BEAN = "grpcRetryEventListener";

    @Bean
    @ConditionalOnMissingBean
    public GrpcRetryObservabilitySettings grpcRetryObservabilitySettings(Environment environment) {
        return GrpcRetryObservabilitySettings.from(environment);
    }

    @Bean
    @ConditionalOnMissingBean
    public RetryStatistics grpcRetryStatistics() {
        return new RetryStatistics();
    }

    /**
     * Every other {@link RetryEventListener} bean (the statistics, the Micrometer listener, the
     * application's own), in {@code @Order}, behind one listener. Primary, so injecting a
     * {@code RetryEventListener} by type gets this one.
     */
    @Bean(name = EVENT_LISTENER_BEAN)
    @Primary
    @ConditionalOnMissingBean(name = EVENT_LISTENER_BEAN)
    public CompositeRetryEventListener grpcRetryEventListener(ObjectProvider<RetryEventListener> listeners) {
        return CompositeRetryEventListener.ofOthers(listeners.orderedStream().toList());
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
