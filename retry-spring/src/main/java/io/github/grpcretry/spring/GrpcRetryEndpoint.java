package io.github.grpcretry.spring;

import io.github.grpcretry.spring.report.RetryReport;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The read-only {@code grpcretry} endpoint ({@code /actuator/grpcretry},
 * {@code /actuator/grpcretry/{client}}) of both Spring Boot lines: for every channel the effective
 * configuration after merging (on the Spring Boot 4.1 line with Spring Boot's service config as the base
 * layer), capping and defaults (each method entry with its policy), the limiter state and the counts
 * since start, as the {@link RetryReport} assembles them. It has no write operation.
 */
@Endpoint(id = GrpcRetryEndpoint.ID, defaultAccess = Access.READ_ONLY)
public class GrpcRetryEndpoint {

    public static final String ID = "grpcretry";

    private final RetryReport report;

    public GrpcRetryEndpoint(RetryReport report) {
        this.report = Objects.requireNonNull(report, "report");
    }

    /** Every known channel. */
    @ReadOperation
    public Map<String, Object> channels() {
        return report.endpoint();
    }

    /** One channel; 404 when the channel is neither configured nor known. */
    @ReadOperation
    public @Nullable Map<String, Object> channel(@Selector String client) {
        return report.endpoint(client);
    }
}
