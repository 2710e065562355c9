package io.github.grpcretry.attempt;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientStreamTracer;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Made by {@link RetryingClientInterceptor#nativeAttempts}: observes grpc-java's own retries (the {@code native} engine) and reports them to a
 * {@link RetryEventListener} like the interceptor engine does: {@code callStarted},
 * {@code attemptStarted}, {@code attemptEnded} and {@code callEnded}.
 *
 * <p>Install it on the channel builder ({@code builder.intercept(...)}), so it sees each logical
 * call above grpc-java's RetriableStream. It adds a {@link ClientStreamTracer.Factory} to every
 * call; grpc-java creates one tracer per stream and tells it, in
 * {@link ClientStreamTracer.StreamInfo}, the number of earlier attempts, whether the stream is a
 * transparent retry and whether the call is hedged. From that:
 * <ul>
 *   <li>kind: {@code initial} for the first attempt, then {@code hedge} when the call is hedged,
 *       else {@code retry};</li>
 *   <li>an attempt is reported started when its stream begins: its headers go out, or it closes
 *       before they could (a stream that never reached a transport). grpc-java makes a retry's
 *       stream before the backoff and drops it without a word when the call ends first (cancelled,
 *       deadline): that retry never began and is reported neither started nor ended, as the
 *       interceptor engine reports no retry it does not send;</li>
 *   <li>a transparent retry (a stream the server never processed, re-sent by grpc-java below the
 *       retry policy) is not an attempt: it continues the attempt it replaces, and only its final
 *       stream's status is reported for that attempt; the call's transparent retries are counted in
 *       {@code callEnded};</li>
 *   <li>{@code attemptEnded} of a failed attempt is reported when the call ends (grpc-java may still
 *       replace it by a transparent retry until then); attempts still open when the call ends (hedges
 *       being cancelled) are reported as soon as their stream closes;</li>
 *   <li>the retry delay is the time between attempts during which no attempt was on the wire: an
 *       attempt is on the wire from the moment its headers are sent ({@code outboundHeaders}; grpc-java
 *       creates a retry's stream before its backoff and starts it after) until its stream closes.</li>
 * </ul>
 * The native engine exposes no throttle tokens and no reasons for retries it did not make, so this
 * interceptor reports no {@code retrySuppressed} and never invents token values.
 */
final class NativeAttemptInterceptor implements ClientInterceptor {

    private final String channel;
    private final String target;
    private final RetryEventListener listener;
    private final ConcurrentMap<String, CallTarget> targets = new ConcurrentHashMap<>();

    /**
     * @param target the channel's target as grpc-java canonicalized it when it built the channel
     *     ({@link CallTarget#target()})
     */
    NativeAttemptInterceptor(String channel, String target, RetryEventListener listener) {
        this.channel = Objects.requireNonNull(channel, "channel");
        this.target = Objects.requireNonNull(target, "target");
        this.listener = Objects.requireNonNull(listener, "listener");
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
            CallOptions callOptions, Channel next) {
        String name = method.getFullMethodName();
        CallTarget target = targets.get(name);
        if (target == null) {
            target = targets.computeIfAbsent(name,
                    n -> new CallTarget(channel, n, this.target, method.isSampledToLocalTracing()));
        }
        CallTracker tracker = new CallTracker(target, listener);
        ClientCall<ReqT, RespT> call = next.newCall(method, callOptions.withStreamTracerFactory(tracker));
        return new TrackedCall<>(call, tracker);
    }

    private static final class TrackedCall<ReqT, RespT> extends ForwardingClientCall.SimpleForwardingClientCall<ReqT, RespT> {
        private final CallTracker tracker;

        TrackedCall(ClientCall<ReqT, RespT> delegate, CallTracker tracker) {
            super(delegate);
            this.tracker = tracker;
        }

        @Override
        public void start(Listener<RespT> responseListener, Metadata headers) {
            tracker.listener.callStarted(tracker.target);
            super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(responseListener) {
                @Override
                public void onClose(Status status, Metadata trailers) {
                    tracker.callClosed(status.getCode());
                    super.onClose(status, trailers);
                }
            }, headers);
        }
    }

    /** One per logical call: the stream tracer factory grpc-java asks for each stream's tracer. */
    static final class CallTracker extends ClientStreamTracer.Factory {
        final CallTarget target;
        final RetryEventListener listener;

        // guarded by this; every section is a few field updates, listeners are called outside it
        private int streamsOnWire;
        private long idleSince = -1;
        private long delayNanos;
        private int retries;
        private int hedges;
        private int transparentRetries;
        private boolean callClosed;
        private final List<EndedAttempt> pending = new ArrayList<>(2);

        CallTracker(CallTarget target, RetryEventListener listener) {
            this.target = target;
            this.listener = listener;
        }

        @Override
        public ClientStreamTracer newClientStreamTracer(ClientStreamTracer.StreamInfo info, Metadata headers) {
            int attemptNumber = info.getPreviousAttempts() + 1;
            AttemptKind kind = attemptNumber == 1 ? AttemptKind.INITIAL
                    : info.isHedging() ? AttemptKind.HEDGE : AttemptKind.RETRY;
            return new AttemptTracer(this, kind, attemptNumber, info.isTransparentRetry());
        }

        /**
         * A stream began (its headers went out, or it closed before they could): the attempt it
         * carries is on. grpc-java makes a retry's stream, and asks for its tracers, before the
         * backoff; a stream the call did not outlive is dropped without a word and never begins.
         */
        void streamBegan(AttemptKind kind, int attemptNumber, boolean transparent) {
            synchronized (this) {
                if (transparent) {
                    // the attempt goes on in this stream: forget the end of the stream it replaces
                    pending.removeIf(e -> e.attemptNumber == attemptNumber);
                    transparentRetries++;
                } else if (kind == AttemptKind.RETRY) {
                    retries++;
                } else if (kind == AttemptKind.HEDGE) {
                    hedges++;
                }
            }
            if (!transparent) {
                listener.attemptStarted(target, kind, attemptNumber);
            }
        }

        /** An attempt's headers went out: it is on the wire; a pause between attempts ends. */
        void streamSent() {
            long now = System.nanoTime();
            synchronized (this) {
                if (streamsOnWire++ == 0 && idleSince >= 0) {
                    delayNanos += now - idleSince;
                    idleSince = -1;
                }
            }
        }

        void streamClosed(AttemptKind kind, int attemptNumber, Status.Code code, boolean wasSent) {
            boolean reportNow;
            synchronized (this) {
                if (wasSent && --streamsOnWire == 0) {
                    idleSince = System.nanoTime();
                }
                reportNow = callClosed;
                if (!reportNow) {
                    pending.add(new EndedAttempt(kind, attemptNumber, code));
                }
            }
            if (reportNow) {
                listener.attemptEnded(target, kind, attemptNumber, code);
            }
        }

        void callClosed(Status.Code code) {
            List<EndedAttempt> ended;
            int r;
            int h;
            int t;
            long d;
            synchronized (this) {
                callClosed = true;
                ended = new ArrayList<>(pending);
                pending.clear();
                r = retries;
                h = hedges;
                t = transparentRetries;
                d = delayNanos;
            }
            for (EndedAttempt e : ended) {
                listener.attemptEnded(target, e.kind, e.attemptNumber, e.code);
            }
            listener.callEnded(target, code, r, h, t, d);
        }
    }

    private record EndedAttempt(AttemptKind kind, int attemptNumber, Status.Code code) {
    }

    private static final class AttemptTracer extends ClientStreamTracer {
        private final CallTracker tracker;
        private final AttemptKind kind;
        private final int attemptNumber;
        private final boolean transparent;
        private boolean sent;
        private boolean closed; // grpc-java calls streamClosed once; guard anyway

        AttemptTracer(CallTracker tracker, AttemptKind kind, int attemptNumber, boolean transparent) {
            this.tracker = tracker;
            this.kind = kind;
            this.attemptNumber = attemptNumber;
            this.transparent = transparent;
        }

        @Override
        public void outboundHeaders() {
            synchronized (this) {
                if (sent || closed) {
                    return;
                }
                sent = true;
            }
            tracker.streamBegan(kind, attemptNumber, transparent);
            tracker.streamSent();
        }

        @Override
        public void streamClosed(Status status) {
            boolean wasSent;
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
                wasSent = sent;
            }
            if (!wasSent) {
                tracker.streamBegan(kind, attemptNumber, transparent); // closed before its headers went out
            }
            tracker.streamClosed(kind, attemptNumber, status.getCode(), wasSent);
        }
    }
}
