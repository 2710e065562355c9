package io.github.grpcretry.attempt;

import io.github.grpcretry.internal.callback.CallbackFailures;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Made by {@link RetryEventListener#composite}: hands every event to several listeners, in order, so the
 * engine holds one. A listener that throws is logged once per listener and kind of event, then counted
 * (docs/design.md §14); the others and the call go on.
 */
final class CompositeRetryEventListener implements RetryEventListener {

    private final RetryEventListener[] delegates;

    CompositeRetryEventListener(List<? extends @Nullable RetryEventListener> listeners) {
        List<RetryEventListener> flat = new ArrayList<>();
        for (RetryEventListener l : listeners) {
            add(flat, l);
        }
        this.delegates = flat.toArray(new RetryEventListener[0]);
    }

    private static void add(List<RetryEventListener> out, @Nullable RetryEventListener l) {
        if (l == null || l == RetryEventListener.NOOP) {
            return;
        }
        if (l instanceof CompositeRetryEventListener c) {
            out.addAll(Arrays.asList(c.delegates));
        } else {
            out.add(l);
        }
    }

    /** The listeners, flattened, in call order. */
    List<RetryEventListener> delegates() {
        return Collections.unmodifiableList(Arrays.asList(delegates));
    }

    @Override
    public void callStarted(CallTarget target) {
        for (int i = 0; i < delegates.length; i++) {
            try {
                delegates[i].callStarted(target);
            } catch (RuntimeException e) {
                failed(i, "callStarted", e);
            }
        }
    }

    @Override
    public void attemptStarted(CallTarget target, AttemptKind kind, int attemptNumber) {
        for (int i = 0; i < delegates.length; i++) {
            try {
                delegates[i].attemptStarted(target, kind, attemptNumber);
            } catch (RuntimeException e) {
                failed(i, "attemptStarted", e);
            }
        }
    }

    @Override
    public void attemptEnded(CallTarget target, AttemptKind kind, int attemptNumber, Status.Code code) {
        for (int i = 0; i < delegates.length; i++) {
            try {
                delegates[i].attemptEnded(target, kind, attemptNumber, code);
            } catch (RuntimeException e) {
                failed(i, "attemptEnded", e);
            }
        }
    }

    @Override
    public void retryScheduled(CallTarget target, int nextAttemptNumber, long delayNanos, DelaySource source) {
        for (int i = 0; i < delegates.length; i++) {
            try {
                delegates[i].retryScheduled(target, nextAttemptNumber, delayNanos, source);
            } catch (RuntimeException e) {
                failed(i, "retryScheduled", e);
            }
        }
    }

    @Override
    public void retrySuppressed(CallTarget target, SuppressionReason reason, Status.Code code) {
        for (int i = 0; i < delegates.length; i++) {
            try {
                delegates[i].retrySuppressed(target, reason, code);
            } catch (RuntimeException e) {
                failed(i, "retrySuppressed", e);
            }
        }
    }

    @Override
    public void backendReused(CallTarget target, AttemptKind kind, int attemptNumber, String reason) {
        for (int i = 0; i < delegates.length; i++) {
            try {
                delegates[i].backendReused(target, kind, attemptNumber, reason);
            } catch (RuntimeException e) {
                failed(i, "backendReused", e);
            }
        }
    }

    @Override
    public void committed(CallTarget target, int attemptNumber) {
        for (int i = 0; i < delegates.length; i++) {
            try {
                delegates[i].committed(target, attemptNumber);
            } catch (RuntimeException e) {
                failed(i, "committed", e);
            }
        }
    }

    @Override
    public void callEnded(CallTarget target, Status.Code code, int retries, int hedges, int transparentRetries,
            long retryDelayNanos) {
        for (int i = 0; i < delegates.length; i++) {
            try {
                delegates[i].callEnded(target, code, retries, hedges, transparentRetries, retryDelayNanos);
            } catch (RuntimeException e) {
                failed(i, "callEnded", e);
            }
        }
    }

    private void failed(int index, String kind, RuntimeException e) {
        CallbackFailures.SHARED.failed("RetryEventListener", delegates[index], kind, e,
                "the event is skipped for this listener, the others and the call go on");
    }

    @Override
    public String toString() {
        return "CompositeRetryEventListener" + Arrays.toString(delegates);
    }
}
