package io.github.grpcretry.attempt;

import java.util.Objects;

/**
 * The channel and method of a call: the bounded tag values of every retry meter. The engine builds
 * one per (channel, method) and reuses it, so listeners may key caches on it.
 *
 * @param channel the channel's name (the name of its configuration under {@code grpc.retry.clients})
 * @param fullMethodName {@code package.Service/Method}, from the call's descriptor
 * @param target the channel's target as grpc-java canonicalizes it when it builds the channel (a URI with
 *     its scheme, such as {@code dns:///inventory:9090}): the {@code grpc.target} attribute of gRPC's
 *     OpenTelemetry meters
 * @param generatedMethod whether the method comes from generated code (its descriptor is
 *     {@linkplain io.grpc.MethodDescriptor#isSampledToLocalTracing() sampled to local tracing}, as
 *     generated stubs' are); the {@code grpc.method} attribute of the others is {@value #OTHER_METHOD}
 */
public record CallTarget(String channel, String fullMethodName, String target, boolean generatedMethod) {

    /** The {@code grpc.method} value of a method that does not come from generated code. */
    public static final String OTHER_METHOD = "other";

    public CallTarget {
        Objects.requireNonNull(channel, "channel");
        Objects.requireNonNull(fullMethodName, "fullMethodName");
        Objects.requireNonNull(target, "target");
    }

    /** A call of a generated method on a channel whose target is not known: the channel's name stands for it. */
    public CallTarget(String channel, String fullMethodName) {
        this(channel, fullMethodName, channel, true);
    }

    /** The {@code grpc.method} attribute: the full method name of a generated method, else {@value #OTHER_METHOD}. */
    public String grpcMethod() {
        return generatedMethod ? fullMethodName : OTHER_METHOD;
    }
}
