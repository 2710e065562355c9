package io.github.grpcretry.spring.bootline;

import java.util.Objects;

/**
 * The application's classpath does not fit the Spring Boot line of the starter it uses
 * ({@link SpringBootLineCheck}). Each line's {@code WrongSpringBootLineFailureAnalyzer} turns it into
 * Spring Boot's start-up report: what was found, and which artifact fits.
 */
public class WrongSpringBootLineException extends RuntimeException {

    private final String action;

    public WrongSpringBootLineException(String description, String action) {
        super(Objects.requireNonNull(description, "description"));
        this.action = Objects.requireNonNull(action, "action");
    }

    WrongSpringBootLineException(SpringBootLineCheck.Problem problem) {
        this(problem.description(), problem.action());
    }

    /** What was found. */
    public String description() {
        return Objects.requireNonNull(getMessage()); // the constructor requires it
    }

    /** What to change. */
    public String action() {
        return action;
    }
}
