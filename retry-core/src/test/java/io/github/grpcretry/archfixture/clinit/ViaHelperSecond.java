package io.github.grpcretry.archfixture.clinit;

/** The other half of {@link ViaHelperFirst}'s cycle. */
public final class ViaHelperSecond {
    static final int VALUE = Integer.parseInt("1") + ViaHelperFirst.VALUE;

    private ViaHelperSecond() {
    }
}
