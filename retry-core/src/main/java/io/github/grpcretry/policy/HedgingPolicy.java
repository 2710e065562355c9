package io.github.grpcretry.policy;

import io.grpc.Status;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/** gRFC A6 {@code hedgingPolicy}, already validated. */
public record HedgingPolicy(int maxAttempts, Duration hedgingDelay, Set<Status.Code> nonFatalStatusCodes) {

    public HedgingPolicy {
        Objects.requireNonNull(hedgingDelay, "hedgingDelay");
        nonFatalStatusCodes = nonFatalStatusCodes.isEmpty()
                ? Collections.emptySet()
                : Collections.unmodifiableSet(EnumSet.copyOf(nonFatalStatusCodes));
    }

    public boolean isNonFatal(Status.Code code) {
        return nonFatalStatusCodes.contains(code);
    }

    public HedgingPolicy capped(int cap) {
        return maxAttempts <= cap ? this : new HedgingPolicy(cap, hedgingDelay, nonFatalStatusCodes);
    }
}
