package io.github.grpcretry.spring;

import io.github.grpcretry.attempt.AdaptiveHedgingRegistry;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * What the engine of every channel shares, the same on both lines (each line's auto-configuration
 * imports it): the per-channel throttles and budgets, the adaptive hedging delays, and the engine's timers.
 */
@Configuration(proxyBeanMethods = false)
public class GrpcRetryEngineConfiguration {

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
