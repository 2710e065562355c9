package io.github.grpcretry.archfixture.clinit;

/** Its static initialiser needs {@link Second}'s, and Second's needs this one's (a deadlock for two threads). */
public final class First {
    static final int VALUE = Second.VALUE + 1;

    private First() {
    }
}
