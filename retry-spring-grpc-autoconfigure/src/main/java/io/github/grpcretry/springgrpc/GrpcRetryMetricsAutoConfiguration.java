package io.github.grpcretry.springgrpc;

import io.github.grpcretry.integration.ChannelStateMeters;
import io.github.grpcretry.integration.RetryLimiterGauges;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.metrics.DeadlineMeters;
import io.github.grpcretry.metrics.GuardMeters;
import io.github.grpcretry.metrics.MicrometerRetryEventListener;
import io.micrometer.core.instrument.MeterRegistry;
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
    @ConditionalOnMissingBean
    @ConditionalOnBean(RetryLimiterRegistry.class)
    public RetryLimiterGauges grpcRetryLimiterGauges(RetryLimiterRegistry limiters) {
        return new RetryLimiterGauges(limiters);
    }

    /** Time left when a call with a deadline starts, and calls refused by min-remaining. */
    @Bean
    @ConditionalOnMissingBean
    public DeadlineMeters grpcRetryDeadlineMeters(MeterRegistry registry) {
        return new DeadlineMeters(registry);
    }

    /**
     * The {@code grpc.client.channel.state} gauges of every channel Spring gRPC builds; a later channel of a
     * name (every {@code createChannel} builds one) takes the name's gauges over. Closed with the context.
     */
    @Bean
    @ConditionalOnBean(SpringGrpcChannelStates.class)
    public ChannelStateMeters grpcRetryChannelStateMeters(MeterRegistry registry, SpringGrpcChannelStates states) {
        ChannelStateMeters meters = new ChannelStateMeters(registry);
        states.onChannel(meters::watch);
        return meters;
    }

    /** Responses the guard marked "do not retry". */
    @Bean
    @ConditionalOnMissingBean
    public GuardMeters grpcRetryGuardMeters(MeterRegistry registry) {
        return new GuardMeters(registry);
    }
}
