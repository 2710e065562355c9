package io.github.grpcretry.sample.demo;

import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.sample.server.ArrivalLog;
import io.github.grpcretry.sample.server.QueueingBackend;
import io.grpc.Status;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Demo mode: the traffic generator and the dashboard's sampler ({@code sample.demo.enabled=false} turns both off). */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "sample.demo.enabled", havingValue = "true", matchIfMissing = true)
public class DemoConfiguration {

    @Bean
    TrafficGenerator trafficGenerator(MeterRegistry registry,
            @Value("${sample.demo.rate:50}") double rate,
            @Value("${sample.demo.failure-rate:0.05}") double failureRate,
            @Value("${sample.demo.slow-share:0.05}") double slowShare,
            @Value("${sample.demo.slow-ms:300}") int slowMs,
            @Value("${sample.demo.strategy:THROTTLED}") DemoStrategy strategy,
            @Value("${sample.demo.deadline:2s}") Duration deadline) {
        return new TrafficGenerator(new DemoSettings(rate, failureRate, slowShare, slowMs, strategy), registry, deadline);
    }

    @Bean
    DemoSampler demoSampler(MeterRegistry registry, RetryLimiterRegistry limiters, TrafficGenerator generator,
            ArrivalLog arrivals, QueueingBackend backend) {
        // one strategy's backlog must not leak into the next: a strategy change empties the queue
        generator.onStrategyChange(s -> backend.reset(Status.ABORTED.withDescription("queue reset: strategy changed to " + s)));
        return new DemoSampler(registry, limiters, generator, arrivals, backend);
    }
}
