package io.github.grpcretry.attempt;

import io.github.grpcretry.internal.callback.CallbackFailures;
import io.grpc.Status;
import java.util.Set;

/**
 * An application's {@link RetryEventListener} as the engine holds it: a throw is logged once per kind of
 * event and counted ({@link CallbackFailures}), and the call goes on (docs/design.md §14).
 */
final class GuardedEventListener implements RetryEventListener {

    private static final String ROLE = "RetryEventListener";
    private static final String OUTCOME = "the event is skipped, the call goes on";

    private final RetryEventListener delegate;

    private GuardedEventListener(RetryEventListener delegate) {
        this.delegate = delegate;
    }

    /** Packages of grpc-retry's own listeners: they guard their delegates themselves, or do not throw. */
    private static final Set<String> OWN_PACKAGES = Set.of("io.github.grpcretry.spring.report",
            "io.github.grpcretry.metrics");

    /**
     * {@code listener} guarded, unless it is the no-op or one of grpc-retry's own listeners: those stay
     * as they are, with no extra call per event.
     */
    static RetryEventListener guard(RetryEventListener listener) {
        if (listener == RetryEventListener.NOOP || listener instanceof GuardedEventListener
                || listener instanceof CompositeRetryEventListener
                || OWN_PACKAGES.contains(listener.getClass().getPackageName())) {
            return listener;
        }
        return new GuardedEventListener(listener);
    }

    private void failed(String kind, RuntimeException e) {
        CallbackFailures.SHARED.failed(ROLE, delegate, kind, e, OUTCOME);
    }

    @Override
    public void callStarted(CallTarget target) {
        try {
            delegate.callStarted(target);
        } catch (RuntimeException e) {
            failed("callStarted", e);
        }
    }

    @Override
    public void backendReused(CallTarget target, AttemptKind kind, int attemptNumber, String reason) {
        try {
            delegate.backendReused(target, kind, attemptNumber, reason);
        } catch (RuntimeException e) {
            failed("backendReused", e);
        }
    }

    @Override
    public void attemptStarted(CallTarget target, AttemptKind kind, int attemptNumber) {
        try {
            delegate.attemptStarted(target, kind, attemptNumber);
        } catch (RuntimeException e) {
            failed("attemptStarted", e);
        }
    }

    @Override
    public void attemptEnded(CallTarget target, AttemptKind kind, int attemptNumber, Status.Code code) {
        try {
            delegate.attemptEnded(target, kind, attemptNumber, code);
        } catch (RuntimeException e) {
            failed("attemptEnded", e);
        }
    }

    @Override
    public void retryScheduled(CallTarget target, int nextAttemptNumber, long delayNanos, DelaySource source) {
        try {
            delegate.retryScheduled(target, nextAttemptNumber, delayNanos, source);
        } catch (RuntimeException e) {
            failed("retryScheduled", e);
        }
    }

    @Override
    public void retrySuppressed(CallTarget target, SuppressionReason reason, Status.Code code) {
        try {
            delegate.retrySuppressed(target, reason, code);
        } catch (RuntimeException e) {
            failed("retrySuppressed", e);
        }
    }

    @Override
    public void committed(CallTarget target, int attemptNumber) {
        try {
            delegate.committed(target, attemptNumber);
        } catch (RuntimeException e) {
            failed("committed", e);
        }
    }

    @Override
    public void callEnded(CallTarget target, Status.Code code, int retries, int hedges, int transparentRetries,
            long retryDelayNanos) {
        try {
            delegate.callEnded(target, code, retries, hedges, transparentRetries, retryDelayNanos);
        } catch (RuntimeException e) {
            failed("callEnded", e);
        }
    }

    @Override
    public String toString() {
        return delegate.toString();
    }
}
