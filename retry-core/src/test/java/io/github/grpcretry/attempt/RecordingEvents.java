package io.github.grpcretry.attempt;

import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/** A {@link RetryEventListener} that records every event, for assertions. Thread-safe. */
final class RecordingEvents implements RetryEventListener {

    record Event(String type, CallTarget target, AttemptKind kind, int attempt, Status.Code code,
            SuppressionReason reason, long nanos) {
    }

    final ConcurrentLinkedQueue<Event> events = new ConcurrentLinkedQueue<>();
    final AtomicInteger callsStarted = new AtomicInteger();
    final AtomicInteger callsEnded = new AtomicInteger();
    final AtomicInteger attemptsStarted = new AtomicInteger();
    final AtomicInteger attemptsEnded = new AtomicInteger();
    /** The {@code hedges} argument of every {@code callEnded}, in order. */
    final ConcurrentLinkedQueue<Integer> hedgesPerCall = new ConcurrentLinkedQueue<>();
    /** Where each scheduled retry's delay came from, in order. */
    final ConcurrentLinkedQueue<DelaySource> delaySources = new ConcurrentLinkedQueue<>();

    @Override
    public void callStarted(CallTarget target) {
        callsStarted.incrementAndGet();
        events.add(new Event("callStarted", target, null, 0, null, null, 0));
    }

    @Override
    public void attemptStarted(CallTarget target, AttemptKind kind, int attemptNumber) {
        attemptsStarted.incrementAndGet();
        events.add(new Event("attemptStarted", target, kind, attemptNumber, null, null, 0));
    }

    @Override
    public void attemptEnded(CallTarget target, AttemptKind kind, int attemptNumber, Status.Code code) {
        attemptsEnded.incrementAndGet();
        events.add(new Event("attemptEnded", target, kind, attemptNumber, code, null, 0));
    }

    @Override
    public void retryScheduled(CallTarget target, int nextAttemptNumber, long delayNanos, DelaySource source) {
        delaySources.add(source);
        events.add(new Event("retryScheduled", target, null, nextAttemptNumber, null, null, delayNanos));
    }

    @Override
    public void retrySuppressed(CallTarget target, SuppressionReason reason, Status.Code code) {
        events.add(new Event("retrySuppressed", target, null, 0, code, reason, 0));
    }

    @Override
    public void committed(CallTarget target, int attemptNumber) {
        events.add(new Event("committed", target, null, attemptNumber, null, null, 0));
    }

    @Override
    public void callEnded(CallTarget target, Status.Code code, int retries, int hedges,
            int transparentRetries, long retryDelayNanos) {
        callsEnded.incrementAndGet();
        hedgesPerCall.add(hedges);
        events.add(new Event("callEnded", target, null, retries, code, null, retryDelayNanos));
    }

    List<Event> ofType(String type) {
        List<Event> out = new ArrayList<>();
        for (Event e : events) {
            if (e.type().equals(type)) {
                out.add(e);
            }
        }
        return out;
    }

    List<SuppressionReason> suppressions() {
        List<SuppressionReason> out = new ArrayList<>();
        for (Event e : ofType("retrySuppressed")) {
            out.add(e.reason());
        }
        return out;
    }

    void clear() {
        events.clear();
        hedgesPerCall.clear();
        callsStarted.set(0);
        callsEnded.set(0);
        attemptsStarted.set(0);
        attemptsEnded.set(0);
    }
}
