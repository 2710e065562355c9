package io.github.grpcretry.autoconfigure.archfixture;

import io.github.grpcretry.internal.pushback.Pushback;
import io.grpc.Metadata;

/** Test fixture only: auto-configuration code that reaches into a retry-core {@code internal} package. */
public final class UsesInternal {

    public long pushback(Metadata trailers) {
        return Pushback.parse(trailers);
    }
}
