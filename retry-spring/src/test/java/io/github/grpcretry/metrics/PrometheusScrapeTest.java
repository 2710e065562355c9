package io.github.grpcretry.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.AttemptKind;
import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.attempt.SuppressionReason;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.spring.metrics.RetryGauges;
import io.grpc.ConnectivityState;
import io.grpc.Status;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** What a Prometheus scrape shows of every meter: names, units, tags. */
class PrometheusScrapeTest {

    @Test
    void everyMeterAppearsWithSensibleNamesAndUnits() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        CallTarget t = new CallTarget("inventory", "shop.Inventory/Reserve", "dns:///inventory:9090", true);
        MicrometerRetryEventListener listener = new MicrometerRetryEventListener(registry);
        listener.attemptEnded(t, AttemptKind.INITIAL, 1, Status.Code.UNAVAILABLE);
        listener.attemptEnded(t, AttemptKind.RETRY, 2, Status.Code.OK);
        listener.retrySuppressed(t, SuppressionReason.BUDGET, Status.Code.UNAVAILABLE);
        listener.callEnded(t, Status.Code.OK, 1, 0, 0, 150_000_000L);
        listener.callEnded(t, Status.Code.OK, 0, 2, 0, 0);
        RetryLimiterRegistry limiters = new RetryLimiterRegistry();
        RetryGauges.limiters(limiters).bindTo(registry);
        limiters.throttle("inventory", new RetryThrottlingPolicy(10, 0.1));
        limiters.budget("inventory", new RetryBudgetPolicy(0.1, 10, Duration.ofSeconds(10)));
        new DeadlineMeters(registry).recordRemaining(t, 2_000_000_000L);
        new DeadlineMeters(registry).fastFail(t);
        new GuardMeters(registry).marked("shop.Orders/Place");
        RetryGauges.channelStates(registry).poll("inventory", () -> ConnectivityState.READY);

        String scrape = registry.scrape();

        assertThat(scrape)
                .contains("grpc_client_retry_attempts_total{client=\"inventory\",kind=\"initial\","
                        + "method=\"shop.Inventory/Reserve\",status=\"UNAVAILABLE\"} 1.0")
                .contains("grpc_client_retry_attempts_total{client=\"inventory\",kind=\"retry\","
                        + "method=\"shop.Inventory/Reserve\",status=\"OK\"} 1.0")
                .contains("grpc_client_call_retries_count{grpc_method=\"shop.Inventory/Reserve\","
                        + "grpc_target=\"dns:///inventory:9090\"} 1")
                .contains("grpc_client_call_retries_sum{grpc_method=\"shop.Inventory/Reserve\","
                        + "grpc_target=\"dns:///inventory:9090\"} 1.0")
                .contains("grpc_client_call_hedges_sum{grpc_method=\"shop.Inventory/Reserve\","
                        + "grpc_target=\"dns:///inventory:9090\"} 2.0")
                .contains("grpc_client_call_retry_delay_seconds_sum{grpc_method=\"shop.Inventory/Reserve\","
                        + "grpc_target=\"dns:///inventory:9090\"} 0.15")
                .contains("grpc_client_retry_suppressed_total{client=\"inventory\",method=\"shop.Inventory/Reserve\","
                        + "reason=\"budget\"} 1.0")
                .contains("grpc_client_retry_tokens{client=\"inventory\"} 10.0")
                .contains("grpc_client_retry_tokens_max{client=\"inventory\"} 10.0")
                .contains("grpc_client_retry_budget_balance{client=\"inventory\"} 100.0")
                .contains("grpc_client_deadline_remaining_seconds_sum{client=\"inventory\","
                        + "method=\"shop.Inventory/Reserve\"} 2.0")
                .contains("grpc_client_deadline_fast_fail_total{client=\"inventory\","
                        + "method=\"shop.Inventory/Reserve\"} 1.0")
                .contains("grpc_server_retry_guard_total{method=\"shop.Orders/Place\"} 1.0")
                .contains("grpc_client_channel_state{client=\"inventory\",state=\"READY\"} 1.0")
                .contains("grpc_client_channel_state{client=\"inventory\",state=\"IDLE\"} 0.0");
    }
}
