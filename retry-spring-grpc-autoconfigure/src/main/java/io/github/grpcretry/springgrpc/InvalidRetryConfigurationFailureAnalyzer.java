package io.github.grpcretry.springgrpc;

import io.github.grpcretry.integration.ConfigProblemReport;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports an invalid retry configuration: each problem with the property path it came from
 * ({@code grpc.retry.*}, Spring Boot's {@code spring.grpc.client.channel.<name>.service-config.*}, or a
 * service-config file and its JSON path), the value and the rule, then what to change.
 */
public class InvalidRetryConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<InvalidRetryConfigurationException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidRetryConfigurationException cause) {
        return new FailureAnalysis(ConfigProblemReport.description(cause, "The gRPC retry configuration"),
                ConfigProblemReport.action(cause), cause);
    }
}
