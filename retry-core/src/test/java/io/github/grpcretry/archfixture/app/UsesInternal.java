package io.github.grpcretry.archfixture.app;

import io.github.grpcretry.internal.commit.RetryBufferPool;

/** A deliberately bad class for ArchitectureRulesTest: application code reaching into an internal package. */
public final class UsesInternal {

    public static long used(RetryBufferPool pool) {
        return pool.used();
    }

    private UsesInternal() {
    }
}
