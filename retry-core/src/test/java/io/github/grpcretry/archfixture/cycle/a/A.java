package io.github.grpcretry.archfixture.cycle.a;

import io.github.grpcretry.archfixture.cycle.b.B;

/** Test fixture only: one half of a package cycle. */
public final class A {

    public B next() {
        return new B();
    }
}
