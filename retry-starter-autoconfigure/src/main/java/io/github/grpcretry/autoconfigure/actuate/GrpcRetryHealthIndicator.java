package io.github.grpcretry.autoconfigure.actuate;

import io.grpc.ConnectivityState;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;

/**
 * The {@code grpcRetry} health contributor: per channel the engine, tokens, max tokens, threshold,
 * whether it is throttling, budget balance and connectivity state. Status UP, or
 * {@code grpc.retry.health.status-when-throttled} while any channel's throttle refuses retries.
 * Throttling is a reaction to a failing downstream, not a fault of this process: the contributor is
 * not part of the liveness group (Boot's liveness group holds only {@code livenessState} unless the
 * application adds members) and should never be added to it.
 */
public class GrpcRetryHealthIndicator implements HealthIndicator {

    private final GrpcRetryReport report;

    public GrpcRetryHealthIndicator(GrpcRetryReport report) {
        this.report = report;
    }

    @Override
    public Health health() {
        Map<String, ConnectivityState> states = report.connectivityStates();
        Map<String, Object> channels = new LinkedHashMap<>();
        List<String> throttled = new ArrayList<>();
        for (String channel : report.channels()) {
            channels.put(channel, report.health(channel, states));
            if (report.isThrottling(channel)) {
                throttled.add(channel);
            }
        }
        Health.Builder builder = throttled.isEmpty()
                ? Health.up()
                : Health.status(new Status(report.settings().statusWhenThrottled()));
        if (!throttled.isEmpty()) {
            builder.withDetail("throttling", throttled);
        }
        return builder.withDetail("channels", channels).build();
    }
}
