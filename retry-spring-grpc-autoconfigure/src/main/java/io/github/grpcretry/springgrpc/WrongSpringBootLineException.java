package io.github.grpcretry.springgrpc;

import java.util.Objects;

/**
 * The application's classpath does not fit this starter's Spring Boot line (see
 * {@code io.github.grpcretry.integration.SpringBootLineCheck}). {@link WrongSpringBootLineFailureAnalyzer} turns it into Spring Boot's
 * start-up report.
 */
public class WrongSpringBootLineException extends RuntimeException {

    private final String action;

    public WrongSpringBootLineException(String description, String action) {
        super(Objects.requireNonNull(description, "description"));
        this.action = Objects.requireNonNull(action, "action");
    }

    /** What was found. */
    public String description() {
        return getMessage();
    }

    /** What to change. */
    public String action() {
        return action;
    }
}
