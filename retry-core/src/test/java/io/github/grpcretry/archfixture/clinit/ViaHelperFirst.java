package io.github.grpcretry.archfixture.clinit;

/**
 * Its static initialiser calls {@link ClinitHelper}, a class with no initialiser of its own, whose method needs
 * {@link ViaHelperSecond}'s; and that one's needs this one's: a deadlock for two threads.
 */
public final class ViaHelperFirst {
    static final int VALUE = ClinitHelper.secondValue() + 1;

    private ViaHelperFirst() {
    }
}
