package io.github.grpcretry.guard;

import io.github.grpcretry.internal.callback.CallbackFailures;
import io.github.grpcretry.internal.pushback.Pushback;
import io.github.grpcretry.internal.server.ApplicationFailureListener;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Server side of the amplification guard (docs/design.md §8). For every inbound call it puts a fresh
 * {@link GuardMarker} into the call's {@link Context} (the handler and everything it starts in that
 * Context see it), and when a marked call closes with a non-OK status it adds the trailer
 * {@code grpc-retry-pushback-ms: -1} (replacing any pushback value already there), which every A6
 * client reads as "do not retry". An OK close is never touched; an unmarked call is never touched.
 *
 * <p>Install it outside every interceptor that may still change the status (exception handlers,
 * the deadline interceptor), so it sees the status that goes on the wire. An exception escaping the
 * handler of a marked call is turned into the close grpc-java would make of it (UNKNOWN,
 * "Application error processing RPC") with the trailer; unmarked calls keep grpc-java's handling.
 */
public final class GuardServerInterceptor implements ServerInterceptor {

    /** The trailer value that means "do not retry". */
    public static final String STOP = "-1";

    private final GuardEventListener events;

    /**
     * Marks the inbound call being served in the current gRPC Context (the guard's marker), so that if
     * it closes with a non-OK status its response says "do not retry": for application code that knows
     * a failure must not be retried by its callers.
     *
     * @return false (and nothing is marked) when no inbound call served through this interceptor is in
     *     the current Context
     */
    public static boolean markCurrentCall() {
        return GuardMarker.markCurrent();
    }

    public GuardServerInterceptor() {
        this(GuardEventListener.NOOP);
    }

    public GuardServerInterceptor(@Nullable GuardEventListener events) {
        this.events = Objects.requireNonNullElse(events, GuardEventListener.NOOP);
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
            ServerCallHandler<ReqT, RespT> next) {
        String method = call.getMethodDescriptor().getFullMethodName();
        GuardMarker marker = new GuardMarker(method);
        GuardedCall<ReqT, RespT> guarded = new GuardedCall<>(call, marker, events);
        Context context = Context.current().withValue(GuardMarker.CONTEXT_KEY, marker);
        ServerCall.Listener<ReqT> delegate = Contexts.interceptCall(context, guarded, headers, next);
        return new GuardedListener<>(delegate, guarded);
    }

    private static final class GuardedCall<ReqT, RespT> extends SimpleForwardingServerCall<ReqT, RespT> {
        private final GuardMarker marker;
        private final GuardEventListener events;
        private volatile boolean closed;

        GuardedCall(ServerCall<ReqT, RespT> delegate, GuardMarker marker, GuardEventListener events) {
            super(delegate);
            this.marker = marker;
            this.events = events;
        }

        @Override
        public void close(Status status, Metadata trailers) {
            closed = true;
            if (!status.isOk() && marker.isMarked()) {
                trailers.discardAll(Pushback.KEY);
                trailers.put(Pushback.KEY, STOP);
                try {
                    events.responseGuarded(marker.inboundMethod(), status.getCode());
                } catch (RuntimeException e) {
                    // a listener must never break the response (docs/design.md §14)
                    CallbackFailures.SHARED.failed("GuardEventListener", events, "responseGuarded", e,
                            "the event is skipped, the response goes out");
                }
            }
            super.close(status, trailers);
        }
    }

    /** Closes a marked call whose handler threw, so the trailer is not lost to grpc-java's stream reset. */
    private static final class GuardedListener<ReqT> extends ApplicationFailureListener<ReqT> {
        private final GuardedCall<ReqT, ?> call;

        GuardedListener(ServerCall.Listener<ReqT> delegate, GuardedCall<ReqT, ?> call) {
            super(delegate);
            this.call = call;
        }

        @Override
        protected void failed(RuntimeException e) {
            if (call.closed || !call.marker.isMarked()) {
                throw e;
            }
            try {
                call.close(Status.UNKNOWN.withDescription("Application error processing RPC").withCause(e),
                        new Metadata());
            } catch (IllegalStateException alreadyClosed) {
                throw e;
            }
        }
    }
}
