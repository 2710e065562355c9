package io.github.grpcretry.attempt;

import io.grpc.Metadata;
import io.grpc.Status;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/** A call the engine's {@link AttemptObserver} follows, and the observer's view of each of its attempts by number. */
final class ObservedCall {

    private final AttemptObserver.Call call;
    private AttemptObserver.Attempt[] attempts = new AttemptObserver.Attempt[4];

    ObservedCall(AttemptObserver.Call call) {
        this.call = call;
    }

    /**
     * Attempt {@code number} starts ({@code delay}: what it waited, -1 for the first; {@code source}: where a
     * retry's delay came from, else null); returns its open scope.
     */
    AttemptObserver.Scope starting(AttemptKind kind, int number, long delay, @Nullable DelaySource source, Metadata headers) {
        AttemptObserver.Attempt o = source == null ? call.attemptStarting(kind, number, delay, headers)
                : call.attemptStarting(kind, number, delay, source, headers);
        synchronized (this) {
            if (attempts.length < number) {
                attempts = Arrays.copyOf(attempts, number * 2);
            }
            attempts[number - 1] = o;
        }
        return o.openScope();
    }

    /** Attempt {@code number} ended. */
    void ended(int number, Status status, Metadata trailers, boolean committed, boolean cancelled) {
        AttemptObserver.Attempt o;
        synchronized (this) {
            o = attempts.length < number ? null : attempts[number - 1];
        }
        if (o != null) {
            o.ended(status, trailers, committed, cancelled);
        }
    }

    /** grpc-java sent attempt {@code number}'s stream again transparently. */
    void transparentRetry(int number) {
        AttemptObserver.Attempt o;
        synchronized (this) {
            o = attempts.length < number ? null : attempts[number - 1];
        }
        if (o != null) {
            o.transparentRetry();
        }
    }

    /** Attempt {@code number}'s stream reached {@code address}. */
    void peer(int number, java.net.SocketAddress address) {
        AttemptObserver.Attempt o;
        synchronized (this) {
            o = attempts.length < number ? null : attempts[number - 1];
        }
        if (o != null) {
            o.peer(address);
        }
    }

    void retrySuppressed(SuppressionReason reason, Status.Code code) {
        call.retrySuppressed(reason, code);
    }
}
