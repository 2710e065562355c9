package io.github.grpcretry.springgrpc;

import io.github.grpcretry.integration.DeadlinePropertyChecks;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import java.util.List;

/** The rules of the {@code grpc.retry.deadline.*} properties, reported with their property paths. */
final class GrpcRetryPropertyChecks {

    private GrpcRetryPropertyChecks() {
    }

    /** @throws InvalidRetryConfigurationException listing every invalid deadline property */
    static void check(GrpcRetryProperties properties) {
        GrpcRetryProperties.Deadline d = properties.deadline();
        List<ConfigProblem> problems = DeadlinePropertyChecks.problems(d.defaultTimeout(), d.reserve(), d.minRemaining(),
                d.http().max(), d.http().header());
        if (!problems.isEmpty()) {
            throw new InvalidRetryConfigurationException(problems);
        }
    }
}
