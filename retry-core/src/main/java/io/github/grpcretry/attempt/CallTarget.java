package io.github.grpcretry.attempt;

import java.util.Objects;

/**
 * The channel and method of a call: the bounded tag values of every retry meter. The engine builds
 * one per (channel, method) and reuses it, so listeners may key caches on it.
 *
 * @param channel the net.devh channel name
 * @param fullMethodName {@code package.Service/Method}, from the call's descriptor
 */
public record CallTarget(String channel, String fullMethodName) {

    public CallTarget {
        Objects.requireNonNull(channel, "channel");
        Objects.requireNonNull(fullMethodName, "fullMethodName");
    }
}
