package io.github.grpcretry.benchmarks;

/** The ways of calling, labelled as in docs/benchmarks.md. */
public enum Variant {
    /** (a) a plain channel: grpc-java's defaults, no service config, no retry policy. */
    BARE,
    /** (b) grpc-java's own retry: the policy in defaultServiceConfig, enableRetry, maxRetryAttempts. */
    NATIVE,
    /** (c) the starter's interceptor engine: config without retry parts, throttle and budget on. */
    INTERCEPTOR,
    /** (d) a blocking stub on a bare channel wrapped in a resilience4j Retry. */
    R4J,
    /**
     * (e) the bare channel with an interceptor that wraps the call and its listener and only forwards:
     * the floor any interceptor pays (a reference for (c), not an alternative to it).
     */
    FORWARDING,
    /**
     * (f) (e) with what any retry layer that counts its replay buffer from the bytes the transport reports written
     * must add to each attempt: the call options copied with a stream tracer factory of its own, and a tracer per
     * stream adding up {@code outboundWireSize}. The floor for (c), not an alternative to it.
     */
    TRACED
}
