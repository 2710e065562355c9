package io.github.grpcretry.autoconfigure.deadline;

/** An invalid {@code grpc.retry.deadline.*} value: stops start-up, reported by a failure analyzer. */
public class InvalidDeadlinePropertyException extends IllegalStateException {

    private final String property;
    private final transient Object value;
    private final String rule;
    private final String fix;

    public InvalidDeadlinePropertyException(String property, Object value, String rule, String fix) {
        super(property + " = " + value + ": " + rule);
        this.property = property;
        this.value = value;
        this.rule = rule;
        this.fix = fix;
    }

    public String getProperty() {
        return property;
    }

    public Object getValue() {
        return value;
    }

    public String getRule() {
        return rule;
    }

    public String getFix() {
        return fix;
    }
}
