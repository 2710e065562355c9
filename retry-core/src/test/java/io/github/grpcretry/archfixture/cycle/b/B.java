package io.github.grpcretry.archfixture.cycle.b;

import io.github.grpcretry.archfixture.cycle.a.A;

/** Test fixture only: the other half of a package cycle. */
public final class B {

    public A back() {
        return new A();
    }
}
