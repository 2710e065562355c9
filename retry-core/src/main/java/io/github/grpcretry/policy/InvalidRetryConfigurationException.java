package io.github.grpcretry.policy;

import java.util.List;

/**
 * Thrown at start-up when the retry configuration has invalid values. Holds every problem found,
 * not only the first.
 */
public class InvalidRetryConfigurationException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient List<ConfigProblem> problems;

    public InvalidRetryConfigurationException(List<ConfigProblem> problems) {
        super(message(problems));
        this.problems = List.copyOf(problems);
    }

    public List<ConfigProblem> getProblems() {
        return problems;
    }

    private static String message(List<ConfigProblem> problems) {
        StringBuilder sb = new StringBuilder("Invalid gRPC retry configuration (")
                .append(problems.size()).append(problems.size() == 1 ? " problem" : " problems").append("):");
        for (ConfigProblem p : problems) {
            sb.append("\n  - ").append(p.describe()).append(" (fix: ").append(p.fix()).append(')');
        }
        return sb.toString();
    }
}
