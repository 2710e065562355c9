package io.github.grpcretry.guard;

import io.grpc.Status;

/**
 * What the amplification guard does, as events (meters and tests observe it here). Implementations
 * must be thread-safe, fast and must not throw.
 */
public interface GuardEventListener {

    GuardEventListener NOOP = new GuardEventListener() {
    };

    /**
     * A downstream call made while serving {@code inboundMethod} failed after its retries were used
     * up or suppressed: the inbound call is now marked.
     *
     * @param inboundMethod full method name of the inbound call
     * @param downstreamMethod full method name of the downstream call
     * @param code the downstream call's final status
     */
    default void inboundMarked(String inboundMethod, String downstreamMethod, Status.Code code) {
    }

    /**
     * A marked inbound call closed with {@code code} (never OK) and the guard added
     * {@code grpc-retry-pushback-ms: -1} to its trailers. Counted in {@code grpc.server.retry.guard}.
     */
    default void responseGuarded(String fullMethodName, Status.Code code) {
    }
}
