package io.github.grpcretry.springgrpc.actuate;

import io.github.grpcretry.spring.report.RetryReport;
import java.util.Objects;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * The {@code grpcRetry} health contributor on Spring Boot 4's health API: per channel the engine,
 * tokens, max tokens, threshold, whether it is throttling, budget balance and connectivity state
 * ({@link RetryReport#health()}). Status UP, or {@code grpc.retry.health.status-when-throttled} while
 * any channel's throttle refuses retries. Throttling is a reaction to a failing downstream, not a fault
 * of this process: the contributor is not part of the liveness group and should never be added to it.
 */
public class GrpcRetryHealthIndicator implements HealthIndicator {

    private final RetryReport report;
    private final String statusWhenThrottled;

    public GrpcRetryHealthIndicator(RetryReport report, String statusWhenThrottled) {
        this.report = Objects.requireNonNull(report, "report");
        this.statusWhenThrottled = RetryReport.statusWhenThrottled(statusWhenThrottled);
    }

    @Override
    public Health health() {
        RetryReport.HealthDetails details = report.health();
        return Health.status(new Status(details.status(statusWhenThrottled))).withDetails(details.details()).build();
    }
}
