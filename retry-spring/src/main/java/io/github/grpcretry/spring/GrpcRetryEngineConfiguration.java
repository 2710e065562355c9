package io.github.grpcretry.spring;

import io.github.grpcretry.attempt.AdaptiveHedgingRegistry;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.attempt.StreamResumption;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.spring.channel.ChannelSetup;
import io.github.grpcretry.spring.channel.StreamResumptions;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * What the engine of every channel shares, the same on both lines (each line's auto-configuration
 * imports it): the per-channel throttles and budgets, the adaptive hedging delays, the engine's timers, and the
 * application's stream resumptions.
 */
@Configuration(proxyBeanMethods = false)
public class GrpcRetryEngineConfiguration {

    private static final Log log = LogFactory.getLog(GrpcRetryEngineConfiguration.class);

    /**
     * Every {@link StreamResumption} bean of the application, checked at start-up (a method that is not
     * server-streaming, or two beans for one method, stops it) and given to the interceptor engine of every channel,
     * also when a run-time reload builds a channel's engine again; with {@code engine: native} one WARN says they
     * are not applied.
     */
    @Bean
    public StreamResumptions grpcRetryStreamResumptions(ListableBeanFactory beans,
            ObjectProvider<GrpcRetryProperties> properties) {
        GrpcRetryProperties p = properties.getIfAvailable();
        return StreamResumptions.of(beans.getBeansOfType(StreamResumption.class),
                p == null ? ChannelSetup.Engine.INTERCEPTOR : p.engine(), log::warn);
    }

    /** The per-channel throttles and budgets. */
    @Bean
    @ConditionalOnMissingBean
    public RetryLimiterRegistry grpcRetryLimiterRegistry() {
        return new RetryLimiterRegistry();
    }

    /**
     * The adaptive hedging delays of every channel that has {@code adaptive-hedging.enabled}, per hedged method:
     * read by the {@code grpc.client.hedging.delay} gauges and the endpoint; an engine rebuilt for a channel
     * with equal adaptive settings takes over its state.
     */
    @Bean
    @ConditionalOnMissingBean
    public AdaptiveHedgingRegistry grpcRetryAdaptiveHedgingRegistry() {
        return new AdaptiveHedgingRegistry();
    }

    /**
     * The timers of the interceptor engine (backoff and hedging delays): daemon threads shared by every
     * channel, and a daemon worker pool for the work a timer triggers when a call has no executor of its
     * own. Closed with the context.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public RetryScheduler grpcRetryScheduler() {
        return RetryScheduler.create(RetryScheduler.SHARED_TIMER_THREADS, "grpc-retry");
    }
}
