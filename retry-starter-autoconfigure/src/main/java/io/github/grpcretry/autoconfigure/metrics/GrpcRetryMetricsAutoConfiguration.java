package io.github.grpcretry.autoconfigure.metrics;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.spring.ConditionalOnGrpcRetryMeterRegistry;
import io.github.grpcretry.spring.GrpcRetryMetersConfiguration;
import io.github.grpcretry.spring.report.ChannelStateSource;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * The meters of docs/design.md §15, when Micrometer is on the classpath and a {@link MeterRegistry} bean
 * exists (Boot's metrics auto-configuration or the application's own): the Micrometer event listener
 * (part of {@code grpcRetryEventListener}), the limiter gauges and the deadline and guard meters
 * ({@link GrpcRetryMetersConfiguration}), and the connectivity gauges of net.devh's channels, the gauges
 * bound by Spring Boot as {@code MeterBinder}s.
 */
@AutoConfiguration(
        after = GrpcRetryEventsAutoConfiguration.class,
        afterName = {
                "io.github.grpcretry.autoconfigure.GrpcRetryAutoConfiguration",
                "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
                "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration"
        })
@ConditionalOnGrpcRetryMeterRegistry
@Import(GrpcRetryMetersConfiguration.class)
public class GrpcRetryMetricsAutoConfiguration {

    /** The {@code grpc.client.channel.state} gauges of every configured or built channel. */
    @Bean
    @ConditionalOnMissingBean
    public NetDevhChannelStateGauges grpcRetryChannelStateGauges(ObjectProvider<ChannelRetryConfigs> configs,
            ObjectProvider<ChannelStateSource> states) {
        return new NetDevhChannelStateGauges(configs, states);
    }
}
