package io.github.grpcretry.autoconfigure;

import io.github.grpcretry.integration.ConfigProblemReport;
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
        return new FailureAnalysis(ConfigProblemReport.description(cause, "The gRPC retry configuration (grpc.retry.*)"),
                ConfigProblemReport.action(cause), cause);
    }
}
