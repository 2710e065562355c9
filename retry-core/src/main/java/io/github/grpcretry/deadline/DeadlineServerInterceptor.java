package io.github.grpcretry.deadline;

import io.github.grpcretry.internal.server.ApplicationFailureListener;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * Server side of deadline propagation:
 * <ul>
 *   <li>An inbound call whose deadline has already passed (or that was already cancelled) when it
 *       reaches this interceptor is closed with DEADLINE_EXCEEDED (CANCELLED) and the handler never
 *       runs.</li>
 *   <li>A handler failure caused by the call's own deadline or cancellation surfaces as
 *       DEADLINE_EXCEEDED / CANCELLED rather than UNKNOWN: an exception escaping the handler, or a
 *       close with UNKNOWN, CANCELLED or INTERNAL, while the call's Context is cancelled because
 *       its deadline passed becomes DEADLINE_EXCEEDED (CANCELLED when the caller cancelled); an
 *       escaping exception carrying a DEADLINE_EXCEEDED status (a downstream call that ran out of
 *       time, typically because of the reserve) becomes DEADLINE_EXCEEDED instead of grpc-java's
 *       UNKNOWN "Application error processing RPC".</li>
 * </ul>
 * Other failures pass unchanged.
 */
public final class DeadlineServerInterceptor implements ServerInterceptor {

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
            ServerCallHandler<ReqT, RespT> next) {
        Context context = Context.current();
        Deadline deadline = context.getDeadline();
        if (context.isCancelled() || deadline != null && deadline.isExpired()) {
            Status status = ownFailure(context);
            if (status == null) {
                status = Status.DEADLINE_EXCEEDED;
            }
            call.close(status.withDescription("deadline of " + call.getMethodDescriptor().getFullMethodName()
                    + " passed before the handler ran"), new Metadata());
            return new ServerCall.Listener<>() {
            };
        }
        MappingCall<ReqT, RespT> mapping = new MappingCall<>(call, context);
        ServerCall.Listener<ReqT> delegate = next.startCall(mapping, headers);
        return new MappingListener<>(delegate, mapping, context);
    }

    /**
     * DEADLINE_EXCEEDED when {@code context} was cancelled because its deadline passed, CANCELLED when
     * it was cancelled otherwise, null when it is not cancelled.
     */
    static @Nullable Status ownFailure(Context context) {
        if (!context.isCancelled()) {
            Deadline deadline = context.getDeadline();
            return deadline != null && deadline.isExpired() ? Status.DEADLINE_EXCEEDED : null;
        }
        Throwable cause = context.cancellationCause();
        Deadline deadline = context.getDeadline();
        if (cause instanceof TimeoutException || deadline != null && deadline.isExpired()
                || Status.fromThrowable(cause).getCode() == Status.Code.DEADLINE_EXCEEDED) {
            return Status.DEADLINE_EXCEEDED;
        }
        return Status.CANCELLED;
    }

    /** The status a failure should surface with, or null to leave it as it is. */
    static @Nullable Status mapThrown(Throwable t, Context context) {
        Status own = ownFailure(context);
        if (own != null) {
            return own.withDescription(descriptionOf(own, t)).withCause(t);
        }
        Status carried = statusInChain(t);
        if (carried != null && carried.getCode() == Status.Code.DEADLINE_EXCEEDED) {
            return carried;
        }
        return null;
    }

    private static String descriptionOf(Status own, @Nullable Throwable t) {
        String what = own.getCode() == Status.Code.DEADLINE_EXCEEDED ? "deadline exceeded" : "call cancelled";
        return t == null ? what : what + " (handler failed with " + t + ")";
    }

    private static @Nullable Status statusInChain(@Nullable Throwable t) {
        for (int depth = 0; t != null && depth < 16; depth++, t = t.getCause()) {
            if (t instanceof StatusRuntimeException sre) {
                return sre.getStatus();
            }
            if (t instanceof StatusException se) {
                return se.getStatus();
            }
        }
        return null;
    }

    private static final class MappingCall<ReqT, RespT> extends SimpleForwardingServerCall<ReqT, RespT> {
        private final Context context;
        private volatile boolean closed;

        MappingCall(ServerCall<ReqT, RespT> delegate, Context context) {
            super(delegate);
            this.context = context;
        }

        @Override
        public void close(Status status, Metadata trailers) {
            closed = true;
            Status.Code code = status.getCode();
            if (code == Status.Code.UNKNOWN || code == Status.Code.CANCELLED || code == Status.Code.INTERNAL) {
                Status own = ownFailure(context);
                if (own != null && own.getCode() != code) {
                    status = own.withDescription(descriptionOf(own, null)
                            + (status.getDescription() == null ? "" : ": " + status.getDescription()))
                            .withCause(status.getCause());
                } else if (own == null && code == Status.Code.UNKNOWN) {
                    Status carried = statusInChain(status.getCause());
                    if (carried != null && carried.getCode() == Status.Code.DEADLINE_EXCEEDED) {
                        status = carried;
                    }
                }
            }
            super.close(status, trailers);
        }
    }

    private static final class MappingListener<ReqT> extends ApplicationFailureListener<ReqT> {
        private final MappingCall<ReqT, ?> call;
        private final Context context;

        MappingListener(ServerCall.Listener<ReqT> delegate, MappingCall<ReqT, ?> call, Context context) {
            super(delegate);
            this.call = call;
            this.context = context;
        }

        @Override
        protected void failed(RuntimeException e) {
            Status mapped = mapThrown(e, context);
            if (mapped == null || call.closed) {
                throw e;
            }
            call.close(mapped, new Metadata());
        }

        @Override
        public void onCancel() {
            try {
                super.onCancel();
            } catch (RuntimeException e) {
                failed(e);
            }
        }
    }
}
