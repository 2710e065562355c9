package io.github.grpcretry.archfixture.clinit;

/** No static initialiser: a method that reads {@link ViaHelperSecond}'s value (initialising it). */
public final class ClinitHelper {
    private ClinitHelper() {
    }

    static int secondValue() {
        return ViaHelperSecond.VALUE;
    }
}
