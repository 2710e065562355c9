package io.github.grpcretry.autoconfigure.metrics;

import io.github.grpcretry.spring.ConditionalOnGrpcRetryMeterRegistry;
import org.springframework.context.annotation.Import;
import io.github.grpcretry.spring.GrpcRetryMetersConfiguration;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.integration.ChannelStateSource;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
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
@ConditionalOnGrpcRetryMeterRegistry
@Import(GrpcRetryMetersConfiguration.class)
public class GrpcRetryMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public GrpcRetryGaugesBinder grpcRetryGaugesBinder(MeterRegistry registry,
            ObjectProvider<RetryLimiterRegistry> limiters, ObjectProvider<ChannelRetryConfigs> configs,
            ObjectProvider<ChannelStateSource> states) {
        return new GrpcRetryGaugesBinder(registry, limiters, configs, states);
    }
}
