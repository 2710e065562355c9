package io.github.grpcretry.springgrpc;

import io.github.grpcretry.spring.ConditionalOnGrpcRetryMeterRegistry;
import io.github.grpcretry.spring.GrpcRetryMetersConfiguration;
import io.github.grpcretry.spring.metrics.RetryGauges;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

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
@ConditionalOnGrpcRetryMeterRegistry
@Import(GrpcRetryMetersConfiguration.class)
public class GrpcRetryMetricsAutoConfiguration {

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
}
