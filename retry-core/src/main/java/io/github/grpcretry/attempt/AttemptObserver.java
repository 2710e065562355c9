package io.github.grpcretry.attempt;

import io.grpc.Metadata;
import io.grpc.Status;
import org.jspecify.annotations.Nullable;

/**
 * Follows each call of the interceptor engine attempt by attempt, with the call's identity (what a
 * {@link RetryEventListener} does not have): the seam of per-attempt tracing (docs/observability.md).
 * {@code io.github.grpcretry.observation.ObservationAttemptObserver} is the Micrometer Observation one:
 * an observation per attempt, a child of the call's, whose trace context goes into that attempt's
 * headers.
 *
 * <p>The engine asks {@link #callStarted} once per call, on the thread that starts it; a call answered
 * {@code null} is not followed further, so an engine without an observer, or an observer that declines a
 * call, costs that call nothing. Every attempt the engine starts for a followed call gets one
 * {@link Call#attemptStarting} and then exactly one {@link Attempt#ended}. Implementations must be
 * thread-safe (the attempts of a hedged call end on different threads) and should not throw: a throw is
 * logged once and counted, and the call goes on (docs/design.md §14).
 */
public interface AttemptObserver {

    /**
     * A call starts (before its first attempt, on the thread that starts it: the application's or an
     * outer interceptor's context is current).
     *
     * @return the call as followed, or {@code null}: this call is not followed
     */
    @Nullable Call callStarted(CallTarget target);

    /** One call followed by an {@link AttemptObserver}. */
    interface Call {

        /**
         * Attempt {@code attemptNumber} is about to start, with {@code headers} (a copy for this attempt
         * alone, already carrying {@code grpc-previous-rpc-attempts} for a retry or hedge): the observer may
         * add to them, e.g. the attempt's own trace context.
         *
         * @param delayNanos what the engine's timer waited before this attempt, measured: the backoff or the
         *     server's pushback before a retry, the hedging delay before a hedge (0 for a hedge sent at once
         *     after a failure); -1 for the first attempt
         */
        Attempt attemptStarting(AttemptKind kind, int attemptNumber, long delayNanos, Metadata headers);

        /**
         * A retry is about to start after a delay that came from {@code source} (the policy's backoff, the
         * server's pushback or its RetryInfo); otherwise as {@link #attemptStarting(AttemptKind, int, long, Metadata)},
         * which it calls by default.
         */
        default Attempt attemptStarting(AttemptKind kind, int attemptNumber, long delayNanos, DelaySource source,
                Metadata headers) {
            return attemptStarting(kind, attemptNumber, delayNanos, headers);
        }

        /** A failed attempt was not followed by a retry (or a hedge was not sent), and why. */
        void retrySuppressed(SuppressionReason reason, Status.Code code);
    }

    /** One attempt of a followed call. */
    interface Attempt {

        /**
         * Makes the attempt current on this thread while the engine starts it and replays the call's
         * requests into it (closed on the same thread before the engine returns).
         */
        Scope openScope();

        /**
         * The attempt ended (once).
         *
         * @param status its status (CANCELLED for an attempt the engine cancelled itself)
         * @param trailers its trailers (empty when it never reached the transport)
         * @param committed whether the call's answer is this attempt's (its response was delivered)
         * @param cancelledByEngine whether the engine cancelled it (a hedge that lost, a call that ended or
         *     was cancelled by the application)
         */
        void ended(Status status, Metadata trailers, boolean committed, boolean cancelledByEngine);

        /**
         * grpc-java sent the attempt's stream again transparently (the server refused it before its
         * application saw it: HTTP/2 {@code REFUSED_STREAM}, or a {@code GOAWAY} above its stream id); the
         * attempt goes on in the new stream. Called on a transport thread before {@link #ended}: it must
         * not block. By default nothing is done.
         */
        default void transparentRetry() {
        }

        /**
         * The attempt's stream reached the backend at {@code address} (its transport's remote address, after the
         * balancer's final pick); again for each stream grpc-java sent transparently. Called on a transport thread:
         * it must not block. By default nothing is done.
         */
        default void peer(java.net.SocketAddress address) {
        }
    }

    /** What {@link Attempt#openScope} opened. */
    interface Scope {
        void close();
    }
}
