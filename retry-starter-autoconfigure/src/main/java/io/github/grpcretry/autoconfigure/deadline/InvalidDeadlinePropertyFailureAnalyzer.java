package io.github.grpcretry.autoconfigure.deadline;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports an invalid {@code grpc.retry.deadline.*} value: property path, value, rule and fix. */
public class InvalidDeadlinePropertyFailureAnalyzer extends AbstractFailureAnalyzer<InvalidDeadlinePropertyException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidDeadlinePropertyException cause) {
        String description = "Invalid gRPC deadline configuration:\n\n    Property: " + cause.getProperty()
                + "\n    Value: " + cause.getValue() + "\n    Rule: " + cause.getRule() + "\n";
        return new FailureAnalysis(description, "Update " + cause.getProperty() + ": " + cause.getFix() + ".", cause);
    }
}
