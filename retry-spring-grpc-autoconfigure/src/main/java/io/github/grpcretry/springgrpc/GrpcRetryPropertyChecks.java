package io.github.grpcretry.springgrpc;

import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** The rules of the {@code grpc.retry.deadline.*} properties, reported with their property paths. */
final class GrpcRetryPropertyChecks {

    private static final String P = "grpc.retry.deadline.";

    private GrpcRetryPropertyChecks() {
    }

    /** @throws InvalidRetryConfigurationException listing every invalid deadline property */
    static void check(GrpcRetryProperties properties) {
        GrpcRetryProperties.Deadline d = properties.deadline();
        List<ConfigProblem> problems = new ArrayList<>();
        if (d.defaultTimeout() != null && !positive(d.defaultTimeout())) {
            problems.add(new ConfigProblem(P + "default-timeout", d.defaultTimeout().toString(), "must be > 0",
                    "set a positive duration such as 5s, or remove it (calls without a deadline then keep none)"));
        }
        if (d.reserve() == null || d.reserve().isNegative()) {
            problems.add(new ConfigProblem(P + "reserve", String.valueOf(d.reserve()), "must be >= 0",
                    "set 0 (off) or a positive duration such as 50ms"));
        }
        if (d.minRemaining() == null || d.minRemaining().isNegative()) {
            problems.add(new ConfigProblem(P + "min-remaining", String.valueOf(d.minRemaining()), "must be >= 0",
                    "set 0 (off) or a positive duration such as 10ms"));
        }
        if (d.http().max() == null || !positive(d.http().max())) {
            problems.add(new ConfigProblem(P + "http.max", String.valueOf(d.http().max()), "must be > 0",
                    "set a positive duration such as 30s"));
        }
        String header = d.http().header() == null ? "" : d.http().header().trim();
        for (int i = 0; i < header.length(); i++) {
            char c = header.charAt(i);
            if (c <= 32 || c >= 127 || "()<>@,;:\\\"/[]?={}".indexOf(c) >= 0) {
                problems.add(new ConfigProblem(P + "http.header", header, "is not a valid HTTP header name",
                        "use letters, digits and '-', e.g. X-Request-Timeout-Ms"));
                break;
            }
        }
        if (!problems.isEmpty()) {
            throw new InvalidRetryConfigurationException(problems);
        }
    }

    private static boolean positive(Duration d) {
        return !d.isNegative() && !d.isZero();
    }
}
