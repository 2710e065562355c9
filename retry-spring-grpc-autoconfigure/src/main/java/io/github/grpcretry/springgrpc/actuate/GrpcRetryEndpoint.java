package io.github.grpcretry.springgrpc.actuate;

import io.github.grpcretry.integration.RetryReport;
import io.grpc.ConnectivityState;
import java.util.LinkedHashMap;
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
 * state and the counts since start. It has no write operation.
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
        Map<String, ConnectivityState> states = report.connectivityStates();
        Map<String, Object> channels = new LinkedHashMap<>();
        for (String channel : report.channels()) {
            channels.put(channel, report.channel(channel, states));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("engine", report.engine());
        out.put("channels", channels);
        return out;
    }

    /** One channel; 404 when the channel is neither configured nor known. */
    @ReadOperation
    public Map<String, Object> channel(@Selector String client) {
        if (!report.channels().contains(client)) {
            return null;
        }
        return report.channel(client, report.connectivityStates());
    }
}
