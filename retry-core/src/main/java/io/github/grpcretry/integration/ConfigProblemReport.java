package io.github.grpcretry.integration;

import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;

/**
 * The start-up report of an invalid retry configuration, as both Spring Boot lines' FailureAnalyzers
 * print it: every problem with the property path it came from (or the file and JSON path), the value
 * and the rule; then, per path, what to change.
 */
public final class ConfigProblemReport {

    private ConfigProblemReport() {
    }

    /**
     * What is wrong.
     *
     * @param configuration how the report names the configuration, e.g. {@code "The gRPC retry configuration"}
     */
    public static String description(InvalidRetryConfigurationException e, String configuration) {
        int n = e.getProblems().size();
        StringBuilder description = new StringBuilder(configuration).append(" has ").append(n)
                .append(n == 1 ? " invalid value:\n" : " invalid values:\n");
        for (ConfigProblem p : e.getProblems()) {
            description.append("\n    Property: ").append(p.path())
                    .append("\n    Value:    ").append(p.value() == null ? "(not set)" : p.value())
                    .append("\n    Reason:   ").append(p.rule()).append('\n');
        }
        return description.toString();
    }

    /** What to change, one line per problem. */
    public static String action(InvalidRetryConfigurationException e) {
        StringBuilder action = new StringBuilder("Update your configuration:\n");
        for (ConfigProblem p : e.getProblems()) {
            action.append("\n    ").append(p.path()).append(": ").append(p.fix());
        }
        return action.toString();
    }
}
