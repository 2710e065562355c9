package io.github.grpcretry.springgrpc;

import io.github.grpcretry.integration.RetryGauges;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.deadline.DeadlineEventListener;
import io.github.grpcretry.guard.GuardEventListener;
import io.github.grpcretry.metrics.MicrometerRetryEventListener;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The meters of the engine, the limiters, the deadline rules and the guard (names and tags as on the
 * Spring Boot 3.5 line), on the application's {@link MeterRegistry}: Spring Boot binds the
 * {@code MeterBinder} and the listeners reach the engine through {@code grpcRetryEventListener}.
 */
@AutoConfiguration(after = GrpcRetryAutoConfiguration.class, afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus.PrometheusMetricsExportAutoConfiguration"})
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnBooleanProperty(name = "grpc.retry.enabled", matchIfMissing = true)
public class GrpcRetryMetricsAutoConfiguration {

    /** The engine's meters: attempts, retries and hedges per call, retry delay, suppressed retries. */
    @Bean
    @ConditionalOnMissingBean
    public MicrometerRetryEventListener grpcRetryMicrometerListener(MeterRegistry registry) {
        return new MicrometerRetryEventListener(registry);
    }

    /** Tokens, max tokens and budget balance of every channel's limiters, bound as the limiters are made. */
    @Bean
    @ConditionalOnMissingBean(name = "grpcRetryLimiterGauges")
    @ConditionalOnBean(RetryLimiterRegistry.class)
    public MeterBinder grpcRetryLimiterGauges(RetryLimiterRegistry limiters) {
        return RetryGauges.limiters(limiters);
    }

    /** Time left when a call with a deadline starts, and calls refused by min-remaining. */
    @Bean
    @ConditionalOnMissingBean(name = "grpcRetryDeadlineMeters")
    public DeadlineEventListener grpcRetryDeadlineMeters(MeterRegistry registry) {
        return MicrometerRetryEventListener.deadlineMeters(registry);
    }

    /**
     * The {@code grpc.client.channel.state} gauges of every channel Spring gRPC builds; a later channel of a
     * name (every {@code createChannel} builds one) takes the name's gauges over. Closed with the context.
     */
    @Bean
    @ConditionalOnBean(SpringGrpcChannelStates.class)
    public RetryGauges.ChannelStates grpcRetryChannelStateMeters(MeterRegistry registry, SpringGrpcChannelStates states) {
        RetryGauges.ChannelStates meters = RetryGauges.channelStates(registry);
        states.onChannel(meters::watch);
        return meters;
    }

    /** Responses the guard marked "do not retry". */
    @Bean
    @ConditionalOnMissingBean(name = "grpcRetryGuardMeters")
    public GuardEventListener grpcRetryGuardMeters(MeterRegistry registry) {
        return MicrometerRetryEventListener.guardMeters(registry);
    }
}
