package io.github.grpcretry.archfixture.clinit;

/**
 * Its static initialiser needs {@link ViaOwnMethodSecond}'s through a method of its own (not in the initialiser's
 * body), and that one's needs this one's: a deadlock for two threads all the same.
 */
public final class ViaOwnMethodFirst {
    static final int VALUE = compute();

    private ViaOwnMethodFirst() {
    }

    private static int compute() {
        return ViaOwnMethodSecond.VALUE + 1;
    }
}
