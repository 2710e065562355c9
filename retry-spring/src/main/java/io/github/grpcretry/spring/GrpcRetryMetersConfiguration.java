package io.github.grpcretry.spring;

import io.github.grpcretry.attempt.AdaptiveHedgingRegistry;
import io.github.grpcretry.deadline.DeadlineEventListener;
import io.github.grpcretry.guard.GuardEventListener;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.metrics.MicrometerRetryEventListener;
import io.github.grpcretry.spring.metrics.RetryGauges;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The meters both lines register alike on the application's {@link MeterRegistry} (each line's
 * auto-configuration imports it where Micrometer and a registry are there, ordered after its own Boot line's
 * metrics auto-configuration, and after the channels' beans, whose registries its conditions look for): the engine's Micrometer listener (part of {@code grpcRetryEventListener}),
 * the limiter gauges, and the deadline and guard meters.
 */
@Configuration(proxyBeanMethods = false)
public class GrpcRetryMetersConfiguration {

    /** The engine's meters: attempts, retries and hedges per call, retry delay, suppressed retries. */
    @Bean
    @ConditionalOnMissingBean
    public MicrometerRetryEventListener grpcRetryMicrometerListener(MeterRegistry registry) {
        return new MicrometerRetryEventListener(registry);
    }

    /** The current adaptive hedging delay of each hedged method ({@code grpc.client.hedging.delay}). */
    @Bean
    @ConditionalOnMissingBean(name = "grpcRetryHedgingDelayGauges")
    @ConditionalOnBean(AdaptiveHedgingRegistry.class)
    public MeterBinder grpcRetryHedgingDelayGauges(AdaptiveHedgingRegistry adaptiveHedging) {
        return RetryGauges.hedgingDelays(adaptiveHedging);
    }

    /** Time left when a call with a deadline starts, and calls refused by min-remaining. */
    @Bean
    @ConditionalOnMissingBean(name = "grpcRetryDeadlineMeters")
    public DeadlineEventListener grpcRetryDeadlineMeters(MeterRegistry registry) {
        return MicrometerRetryEventListener.deadlineMeters(registry);
    }

    /**
     * Tokens, max tokens and budget balance of every channel's limiters, bound as the limiters are made
     * (a {@code MeterBinder} Spring Boot binds).
     */
    @Bean
    @ConditionalOnMissingBean(name = "grpcRetryLimiterGauges")
    @ConditionalOnBean(RetryLimiterRegistry.class)
    public MeterBinder grpcRetryLimiterGauges(RetryLimiterRegistry limiters) {
        return RetryGauges.limiters(limiters);
    }

    /** Responses the guard marked "do not retry". */
    @Bean
    @ConditionalOnMissingBean(name = "grpcRetryGuardMeters")
    public GuardEventListener grpcRetryGuardMeters(MeterRegistry registry) {
        return MicrometerRetryEventListener.guardMeters(registry);
    }
}
