package io.github.grpcretry.autoconfigure.metrics;

import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.integration.ChannelStateSource;
import io.github.grpcretry.deadline.DeadlineEventListener;
import io.github.grpcretry.guard.GuardEventListener;
import io.github.grpcretry.metrics.MicrometerRetryEventListener;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * The meters of docs/design.md §15, when Micrometer is on the classpath and a {@link MeterRegistry} bean
 * exists (Boot's metrics auto-configuration or the application's own): the Micrometer event
 * listener (part of {@code grpcRetryEventListener}), the limiter and connectivity gauges, and the
 * deadline and guard meters for those features to call.
 */
@AutoConfiguration(
        after = GrpcRetryEventsAutoConfiguration.class,
        afterName = {
                "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
                "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration"
        })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnProperty(prefix = "grpc.retry", name = "enabled", havingValue = "true", matchIfMissing = true)
public class GrpcRetryMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public MicrometerRetryEventListener grpcRetryMicrometerListener(MeterRegistry registry) {
        return new MicrometerRetryEventListener(registry);
    }

    @Bean
    @ConditionalOnMissingBean(name = "grpcRetryDeadlineMeters")
    public DeadlineEventListener grpcRetryDeadlineMeters(MeterRegistry registry) {
        return MicrometerRetryEventListener.deadlineMeters(registry);
    }

    @Bean
    @ConditionalOnMissingBean(name = "grpcRetryGuardMeters")
    public GuardEventListener grpcRetryGuardMeters(MeterRegistry registry) {
        return MicrometerRetryEventListener.guardMeters(registry);
    }

    @Bean
    @ConditionalOnMissingBean
    public GrpcRetryGaugesBinder grpcRetryGaugesBinder(MeterRegistry registry,
            ObjectProvider<RetryLimiterRegistry> limiters, ObjectProvider<ChannelRetryConfigs> configs,
            ObjectProvider<ChannelStateSource> states) {
        return new GrpcRetryGaugesBinder(registry, limiters, configs, states);
    }
}
