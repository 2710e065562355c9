package io.github.grpcretry.internal.config;

import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** A {@code hedgingPolicy} as configured, not yet validated: every field may be missing. */
public record HedgingPolicyDraft(
        String path,
        ConfigNaming naming,
        @Nullable Sourced<Integer> maxAttempts,
        @Nullable Sourced<Duration> hedgingDelay,
        @Nullable Sourced<List<String>> nonFatalStatusCodes) {

    public boolean isEmpty() {
        return maxAttempts == null && hedgingDelay == null && nonFatalStatusCodes == null;
    }

    /** This draft's fields where set, {@code under}'s elsewhere. */
    public HedgingPolicyDraft overlay(@Nullable HedgingPolicyDraft under) {
        if (under == null) {
            return this;
        }
        return new HedgingPolicyDraft(path, naming,
                Sourced.firstSet(maxAttempts, under.maxAttempts),
                Sourced.firstSet(hedgingDelay, under.hedgingDelay),
                Sourced.firstSet(nonFatalStatusCodes, under.nonFatalStatusCodes));
    }

    String field(String jsonName) {
        return naming.child(path, jsonName);
    }
}
