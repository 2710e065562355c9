package io.github.grpcretry.autoconfigure;

import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports an invalid gRPC retry configuration: every problem with its property path (or file and
 * JSON path), value and rule, then what to change.
 */
public class InvalidRetryConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<InvalidRetryConfigurationException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidRetryConfigurationException cause) {
        int n = cause.getProblems().size();
        StringBuilder description = new StringBuilder("The gRPC retry configuration (grpc.retry.*) has ")
                .append(n).append(n == 1 ? " invalid value" : " invalid values").append(":\n");
        StringBuilder action = new StringBuilder("Update your configuration:\n");
        for (ConfigProblem p : cause.getProblems()) {
            description.append("\n    Property: ").append(p.path())
                    .append("\n    Value:    ").append(p.value() == null ? "(not set)" : p.value())
                    .append("\n    Reason:   ").append(p.rule()).append('\n');
            action.append("\n    ").append(p.path()).append(": ").append(p.fix());
        }
        return new FailureAnalysis(description.toString(), action.toString(), cause);
    }
}
