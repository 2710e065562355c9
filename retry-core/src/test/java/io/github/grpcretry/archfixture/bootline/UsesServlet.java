package io.github.grpcretry.archfixture.bootline;

import jakarta.servlet.archfixture.ServletLike;

/** Test fixture only: a grpc-retry class that depends on a {@code jakarta.servlet} class. */
public final class UsesServlet {

    public String describe() {
        return ServletLike.name();
    }
}
