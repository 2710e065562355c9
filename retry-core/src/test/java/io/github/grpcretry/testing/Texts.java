package io.github.grpcretry.testing;

/** Small helpers for assertions on captured console output. */
public final class Texts {

    private Texts() {
    }

    /** How often {@code part} occurs in {@code text} (non-overlapping). */
    public static int occurrences(String text, String part) {
        int n = 0;
        for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + part.length())) {
            n++;
        }
        return n;
    }
}
