package io.github.grpcretry.guard;

import io.grpc.Context;

/**
 * The mark of one inbound call (docs/design.md §8): put into the call's gRPC {@link Context} by the
 * {@link GuardServerInterceptor} when the call starts, set by the {@link GuardClientInterceptor}
 * when a downstream call made in that Context fails after its retries were used up or suppressed.
 * Because it travels in the Context, it works on any thread the Context is carried to
 * ({@code GrpcContextPropagation.wrap(...)}, {@code Context.wrap}, {@code @Async} with the task
 * decorator, Reactor with context-propagation).
 *
 * <p>Application code may mark the current inbound call itself, e.g. after an HTTP or database
 * client gave up retrying: {@code GuardMarker.markCurrent()}.
 */
final class GuardMarker {

    /** The Context key under which the server interceptor keeps the inbound call's marker. */
    public static final Context.Key<GuardMarker> CONTEXT_KEY = Context.key("io.github.grpcretry.guard.marker");

    private final String inboundMethod;
    private volatile boolean marked;

    /** @param inboundMethod the full method name of the inbound call */
    public GuardMarker(String inboundMethod) {
        this.inboundMethod = inboundMethod;
    }

    /** The marker of the inbound call whose Context is current, or null outside one. */
    public static GuardMarker current() {
        return CONTEXT_KEY.get();
    }

    /**
     * Marks the inbound call whose Context is current. Returns false (and does nothing) when there is
     * no guarded inbound call in the current Context.
     */
    public static boolean markCurrent() {
        GuardMarker m = CONTEXT_KEY.get();
        if (m == null) {
            return false;
        }
        m.mark();
        return true;
    }

    /** Marks the inbound call: if it closes with a non-OK status, its response says "do not retry". */
    public void mark() {
        marked = true;
    }

    public boolean isMarked() {
        return marked;
    }

    public String inboundMethod() {
        return inboundMethod;
    }

    @Override
    public String toString() {
        return "GuardMarker[" + inboundMethod + (marked ? ", marked]" : "]");
    }
}
