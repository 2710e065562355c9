package io.github.grpcretry.sample.server;

import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Configuration(proxyBeanMethods = false)
public class FlakyServerConfiguration {

    @Bean
    ArrivalLog arrivalLog() {
        return new ArrivalLog();
    }

    /**
     * The backend's capacity (queue mode): {@code sample.flaky.queue.workers} workers of
     * {@code service-time} each (4 × 20 ms = 200 calls/s), at most {@code limit} calls waiting,
     * {@code drop-expired} to skip calls whose deadline passed while they waited.
     */
    @Bean(destroyMethod = "close")
    QueueingBackend queueingBackend(@Value("${sample.flaky.queue.workers:4}") int workers,
            @Value("${sample.flaky.queue.service-time:20ms}") Duration serviceTime,
            @Value("${sample.flaky.queue.limit:4000}") int limit,
            @Value("${sample.flaky.queue.drop-expired:false}") boolean dropExpired) {
        return new QueueingBackend(new QueueingBackend.Settings(workers, serviceTime, limit, dropExpired));
    }

    @Bean
    FaultScript faultScript(@Value("${sample.flaky.seed:42}") long seed) {
        return new FaultScript(seed);
    }
}
