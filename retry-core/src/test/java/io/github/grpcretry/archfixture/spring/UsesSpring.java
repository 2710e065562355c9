package io.github.grpcretry.archfixture.spring;

import org.springframework.archfixture.SpringLike;

/** Test fixture only: a grpc-retry class that depends on an {@code org.springframework} class. */
public final class UsesSpring {

    public String describe() {
        return SpringLike.name();
    }
}
