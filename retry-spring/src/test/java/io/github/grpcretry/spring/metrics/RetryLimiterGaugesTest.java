package io.github.grpcretry.spring.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.throttle.RetryThrottle;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryLimiterGaugesTest {

    @Test
    void gaugesFollowLimitersCreatedBeforeAndAfterBinding() {
        RetryLimiterRegistry limiters = new RetryLimiterRegistry();
        RetryThrottle early = limiters.throttle("early", new RetryThrottlingPolicy(10, 0.1)).orElseThrow();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new RetryLimiterGauges(limiters).bindTo(registry);

        assertThat(gauge(registry, "grpc.client.retry.tokens", "early")).isEqualTo(10.0);
        assertThat(registry.find("grpc.client.retry.tokens").tag("client", "late").gauge()).isNull();

        // a channel built after binding: its limiters are created lazily, its gauges appear with them
        RetryThrottle late = limiters.throttle("late", new RetryThrottlingPolicy(10, 0.1)).orElseThrow();
        limiters.budget("late", new RetryBudgetPolicy(0.2, 1, Duration.ofSeconds(10))).orElseThrow().onCall();
        assertThat(gauge(registry, "grpc.client.retry.tokens.max", "late")).isEqualTo(10.0);
        assertThat(gauge(registry, "grpc.client.retry.budget.balance", "late")).isEqualTo(10.2, within());

        // the R2 sequence of docs/design.md §5: 6 qualified failures take 10 -> 4, then +0.1 per success
        for (int i = 0; i < 6; i++) {
            late.onQualifiedFailureThenCheckAllowed();
        }
        assertThat(gauge(registry, "grpc.client.retry.tokens", "late")).isEqualTo(4.0);
        late.onSuccess();
        assertThat(gauge(registry, "grpc.client.retry.tokens", "late")).isEqualTo(4.1, within());
        assertThat(gauge(registry, "grpc.client.retry.tokens", "early")).isEqualTo(10.0);
        early.onQualifiedFailureThenCheckAllowed();
        assertThat(gauge(registry, "grpc.client.retry.tokens", "early")).isEqualTo(9.0);

        Gauge tokens = registry.get("grpc.client.retry.tokens").tag("client", "late").gauge();
        assertThat(tokens.getId().getTags()).hasSize(1);
        assertThat(tokens.getId().getBaseUnit()).isEqualTo("tokens");
    }

    @Test
    void bindingTwoRegistriesFeedsBoth() {
        RetryLimiterRegistry limiters = new RetryLimiterRegistry();
        RetryLimiterGauges gauges = new RetryLimiterGauges(limiters);
        SimpleMeterRegistry one = new SimpleMeterRegistry();
        SimpleMeterRegistry two = new SimpleMeterRegistry();
        gauges.bindTo(one);
        gauges.bindTo(two);
        gauges.bindTo(two);
        limiters.throttle("c", new RetryThrottlingPolicy(4, 1)).orElseThrow();
        assertThat(gauge(one, "grpc.client.retry.tokens", "c")).isEqualTo(4.0);
        assertThat(gauge(two, "grpc.client.retry.tokens", "c")).isEqualTo(4.0);
    }

    @Test
    void theGaugesFollowALimiterAReloadReplaced() {
        RetryLimiterRegistry limiters = new RetryLimiterRegistry();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new RetryLimiterGauges(limiters).bindTo(registry);
        limiters.throttle("c", new RetryThrottlingPolicy(4, 1)).orElseThrow().onQualifiedFailureThenCheckAllowed();
        assertThat(gauge(registry, "grpc.client.retry.tokens", "c")).isEqualTo(3.0);
        limiters.replaceThrottle("c", new RetryThrottlingPolicy(8, 1));
        assertThat(gauge(registry, "grpc.client.retry.tokens", "c")).isEqualTo(8.0);
        assertThat(gauge(registry, "grpc.client.retry.tokens.max", "c")).isEqualTo(8.0);
        limiters.replaceBudget("c", new RetryBudgetPolicy(0.2, 1, Duration.ofSeconds(10)));
        assertThat(gauge(registry, "grpc.client.retry.budget.balance", "c")).isEqualTo(10.0, within());
        limiters.replaceThrottle("c", null);
        assertThat(gauge(registry, "grpc.client.retry.tokens", "c")).isNaN();
    }

    private static org.assertj.core.data.Offset<Double> within() {
        return org.assertj.core.data.Offset.offset(1e-9);
    }

    private static double gauge(SimpleMeterRegistry registry, String name, String client) {
        return registry.get(name).tag("client", client).gauge().value();
    }
}
