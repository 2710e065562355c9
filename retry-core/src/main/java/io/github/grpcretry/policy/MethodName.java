package io.github.grpcretry.policy;

import io.grpc.MethodDescriptor;
import org.jspecify.annotations.Nullable;

/**
 * One {@code name} entry of a method config: gRPC's matcher. Without a service it matches every
 * service (the channel default); without a method, every method of the service.
 */
public record MethodName(@Nullable String service, @Nullable String method) {

    public static final MethodName DEFAULT = new MethodName(null, null);

    public MethodName {
        service = blankToNull(service);
        method = blankToNull(method);
    }

    public static MethodName of(@Nullable String service, @Nullable String method) {
        return new MethodName(service, method);
    }

    /** The match specificity: 2 exact method, 1 whole service, 0 channel default. */
    public int specificity() {
        if (service == null) {
            return 0;
        }
        return method == null ? 1 : 2;
    }

    /** Whether this name matches the given fully-qualified service and bare method name. */
    public boolean matches(@Nullable String fullServiceName, @Nullable String methodName) {
        if (service == null) {
            return true;
        }
        if (!service.equals(fullServiceName)) {
            return false;
        }
        return method == null || method.equals(methodName);
    }

    public boolean matches(MethodDescriptor<?, ?> descriptor) {
        return matches(descriptor.getServiceName(), descriptor.getBareMethodName());
    }

    /**
     * Whether every call this name matches would already be matched at least as closely by
     * {@code other}, so {@code other} shadows this name when it is consulted first.
     */
    public boolean isShadowedBy(MethodName other) {
        if (other.service == null) {
            return true;
        }
        if (!other.service.equals(service)) {
            return false;
        }
        return other.method == null || other.method.equals(method);
    }

    @Override
    public String toString() {
        if (service == null) {
            return "*";
        }
        return method == null ? service + "/*" : service + "/" + method;
    }

    private static @Nullable String blankToNull(@Nullable String s) {
        return s == null || s.isBlank() ? null : s.trim();
    }
}
