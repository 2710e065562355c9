package io.github.grpcretry.springgrpc;

import io.github.grpcretry.policy.ConfigProblem;
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
        int n = cause.getProblems().size();
        StringBuilder description = new StringBuilder("The gRPC retry configuration has ").append(n)
                .append(n == 1 ? " invalid value:\n" : " invalid values:\n");
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
