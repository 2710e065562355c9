package io.github.grpcretry.springgrpc.actuate;

import io.github.grpcretry.integration.RetryReport;
import java.util.Map;
import java.util.Objects;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The read-only {@code grpcretry} endpoint ({@code /actuator/grpcretry},
 * {@code /actuator/grpcretry/{client}}): for every channel the effective configuration after merging
 * (Spring Boot's service config, the file, the properties, GLOBAL), capping and defaults, the limiter
 * state and the counts since start, as the {@link RetryReport} assembles them. It has no write operation.
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
    public Map<String, Object> channel(@Selector String client) {
        return report.endpoint(client);
    }
}
