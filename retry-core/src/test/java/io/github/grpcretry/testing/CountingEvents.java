package io.github.grpcretry.testing;

import io.github.grpcretry.attempt.AttemptKind;
import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.attempt.DelaySource;
import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.SuppressionReason;
import io.grpc.Status;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A {@link RetryEventListener} that only counts (no per-event storage), for long runs: calls
 * started and ended, attempts by kind, suppressions by reason, commits, end codes.
 */
public final class CountingEvents implements RetryEventListener {

    public final AtomicLong callsStarted = new AtomicLong();
    public final AtomicLong callsEnded = new AtomicLong();
    public final AtomicLong attemptsStarted = new AtomicLong();
    public final AtomicLong attemptsEnded = new AtomicLong();
    public final AtomicLong retriesScheduled = new AtomicLong();
    public final AtomicLong commits = new AtomicLong();
    private final AtomicLongArray attemptsByKind = new AtomicLongArray(AttemptKind.values().length);
    private final AtomicLongArray suppressed = new AtomicLongArray(SuppressionReason.values().length);
    private final AtomicLongArray endCodes = new AtomicLongArray(Status.Code.values().length);

    @Override
    public void callStarted(CallTarget target) {
        callsStarted.incrementAndGet();
    }

    @Override
    public void attemptStarted(CallTarget target, AttemptKind kind, int attemptNumber) {
        attemptsStarted.incrementAndGet();
        attemptsByKind.incrementAndGet(kind.ordinal());
    }

    @Override
    public void attemptEnded(CallTarget target, AttemptKind kind, int attemptNumber, Status.Code code) {
        attemptsEnded.incrementAndGet();
    }

    @Override
    public void retryScheduled(CallTarget target, int nextAttemptNumber, long delayNanos,
            DelaySource source) {
        retriesScheduled.incrementAndGet();
    }

    @Override
    public void retrySuppressed(CallTarget target, SuppressionReason reason, Status.Code code) {
        suppressed.incrementAndGet(reason.ordinal());
    }

    @Override
    public void committed(CallTarget target, int attemptNumber) {
        commits.incrementAndGet();
    }

    @Override
    public void callEnded(CallTarget target, Status.Code code, int retries, int hedges,
            int transparentRetries, long retryDelayNanos) {
        callsEnded.incrementAndGet();
        endCodes.incrementAndGet(code.ordinal());
    }

    public long attempts(AttemptKind kind) {
        return attemptsByKind.get(kind.ordinal());
    }

    public long suppressed(SuppressionReason reason) {
        return suppressed.get(reason.ordinal());
    }

    /** Non-zero suppression counts by reason. */
    public Map<SuppressionReason, Long> suppressions() {
        Map<SuppressionReason, Long> out = new EnumMap<>(SuppressionReason.class);
        for (SuppressionReason r : SuppressionReason.values()) {
            long n = suppressed.get(r.ordinal());
            if (n > 0) {
                out.put(r, n);
            }
        }
        return out;
    }

    /** Non-zero end codes of logical calls. */
    public Map<Status.Code, Long> endCodes() {
        Map<Status.Code, Long> out = new EnumMap<>(Status.Code.class);
        for (Status.Code c : Status.Code.values()) {
            long n = endCodes.get(c.ordinal());
            if (n > 0) {
                out.put(c, n);
            }
        }
        return out;
    }
}
