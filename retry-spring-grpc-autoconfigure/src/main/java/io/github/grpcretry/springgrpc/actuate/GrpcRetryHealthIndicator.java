package io.github.grpcretry.springgrpc.actuate;

import io.github.grpcretry.integration.RetryReport;
import io.grpc.ConnectivityState;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * The {@code grpcRetry} health contributor on Spring Boot 4's health API: per channel the engine,
 * tokens, max tokens, threshold, whether it is throttling, budget balance and connectivity state.
 * Status UP, or {@code grpc.retry.health.status-when-throttled} while any channel's throttle refuses
 * retries. Throttling is a reaction to a failing downstream, not a fault of this process: the
 * contributor is not part of the liveness group and should never be added to it.
 */
public class GrpcRetryHealthIndicator implements HealthIndicator {

    private final RetryReport report;
    private final String statusWhenThrottled;

    public GrpcRetryHealthIndicator(RetryReport report, String statusWhenThrottled) {
        this.report = Objects.requireNonNull(report, "report");
        this.statusWhenThrottled = statusWhenThrottled == null || statusWhenThrottled.isBlank() ? "UP"
                : statusWhenThrottled.trim().toUpperCase(java.util.Locale.ROOT);
    }

    @Override
    public Health health() {
        Map<String, ConnectivityState> states = report.connectivityStates();
        Map<String, Object> channels = new LinkedHashMap<>();
        List<String> throttling = new ArrayList<>();
        for (String channel : report.channels()) {
            channels.put(channel, report.health(channel, states));
            if (report.isThrottling(channel)) {
                throttling.add(channel);
            }
        }
        Health.Builder builder = throttling.isEmpty() ? Health.up() : Health.status(new Status(statusWhenThrottled));
        if (!throttling.isEmpty()) {
            builder.withDetail("throttling", throttling);
        }
        return builder.withDetail("channels", channels).build();
    }
}
