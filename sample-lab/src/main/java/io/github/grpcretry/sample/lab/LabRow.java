package io.github.grpcretry.sample.lab;

/**
 * One row of a lab table: the case, the figure the source article measured (grpc-go 1.84 or its
 * Python service), what this engine measured now, how the row is checked and whether it passed.
 */
public record LabRow(String caseName, String seed, String measured, Check check, boolean pass, String rule) {

    /** How a row is judged. */
    public enum Check {
        /** Deterministic: the measured figure equals the article's; a deviation makes the lab exit non-zero. */
        EXACT("exact"),
        /**
         * Deterministic, but judged by a rule of this starter stated in the row, because the article's
         * figure differs on purpose (a deliberate difference) or does not exist; a row that breaks its
         * rule makes the lab exit non-zero, like an exact one.
         */
        RULE("rule"),
        /** Random (fixed seed): must lie within the stated tolerance of the seed. */
        TOLERANCE("tolerance"),
        /** Timing: must lie in a range (never exact milliseconds). */
        RANGE("range"),
        /** Shown for comparison, not checked (a formula, or a deliberate difference explained in the rule). */
        INFO("info"),
        /** The feature this row needs is not in this build; nothing was measured. */
        NOT_AVAILABLE("not available");

        private final String label;

        Check(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    public static LabRow exact(String caseName, String seed, String measured, boolean pass, String rule) {
        return new LabRow(caseName, seed, measured, Check.EXACT, pass, rule);
    }

    public static LabRow rule(String caseName, String seed, String measured, boolean pass, String rule) {
        return new LabRow(caseName, seed, measured, Check.RULE, pass, rule);
    }

    public static LabRow tolerance(String caseName, String seed, String measured, boolean pass, String rule) {
        return new LabRow(caseName, seed, measured, Check.TOLERANCE, pass, rule);
    }

    public static LabRow range(String caseName, String seed, String measured, boolean pass, String rule) {
        return new LabRow(caseName, seed, measured, Check.RANGE, pass, rule);
    }

    public static LabRow info(String caseName, String seed, String measured, String rule) {
        return new LabRow(caseName, seed, measured, Check.INFO, true, rule);
    }

    public static LabRow notAvailable(String caseName, String seed, String why) {
        return new LabRow(caseName, seed, "not available", Check.NOT_AVAILABLE, true, why);
    }

    /** The mark shown in the check column. */
    public String mark() {
        return switch (check) {
            case INFO -> "–";
            case NOT_AVAILABLE -> "n/a";
            default -> pass ? "✓" : "✗";
        };
    }
}
