package io.github.grpcretry.archfixture.exposing;

import io.github.grpcretry.internal.pushback.Pushback;

/** A deliberately bad class for {@code ArchitectureRulesTest}: public, outside internal, returning an internal type. */
public final class ExposesInternal {

    public Pushback pushback() {
        return null;
    }

    Pushback hidden() {
        return null;
    }
}
