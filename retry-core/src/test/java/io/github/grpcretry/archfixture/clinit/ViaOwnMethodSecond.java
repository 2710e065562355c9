package io.github.grpcretry.archfixture.clinit;

/** The other half of {@link ViaOwnMethodFirst}'s cycle. */
public final class ViaOwnMethodSecond {
    static final int VALUE = Integer.parseInt("1") + ViaOwnMethodFirst.VALUE;

    private ViaOwnMethodSecond() {
    }
}
