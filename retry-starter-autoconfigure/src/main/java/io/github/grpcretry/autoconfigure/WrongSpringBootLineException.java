package io.github.grpcretry.autoconfigure;

import java.util.Objects;

/** The classpath does not fit this starter's Spring Boot line; {@link WrongSpringBootLineFailureAnalyzer} reports it. */
public class WrongSpringBootLineException extends RuntimeException {

    private final String action;

    public WrongSpringBootLineException(String description, String action) {
        super(Objects.requireNonNull(description, "description"));
        this.action = Objects.requireNonNull(action, "action");
    }

    public String description() {
        return getMessage();
    }

    public String action() {
        return action;
    }
}
