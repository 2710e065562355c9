package io.github.grpcretry.archfixture.clinit;

/** The other half of {@link First}'s cycle. */
public final class Second {
    static final int VALUE = Integer.parseInt("1") + First.VALUE;

    private Second() {
    }
}
