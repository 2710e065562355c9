package io.github.grpcretry.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.attempt.DelaySource;
import io.github.grpcretry.attempt.RetryEventListener;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The retries an engine schedules, as it reports them, for tests that act while a call waits in a backoff:
 * {@link #awaitBackoff} returns once the next retry is scheduled (an event, no sleep).
 */
public final class ScheduledRetries implements RetryEventListener {

    private final LinkedBlockingQueue<Long> delays = new LinkedBlockingQueue<>();

    @Override
    public void retryScheduled(CallTarget target, int nextAttemptNumber, long delayNanos,
            DelaySource source) {
        delays.add(delayNanos);
    }

    /** Waits up to {@code timeoutMillis} for the next retry scheduled and checks it waits {@code backoffMillis}. */
    public void awaitBackoff(long backoffMillis, long timeoutMillis) throws InterruptedException {
        Long delay = delays.poll(timeoutMillis, TimeUnit.MILLISECONDS);
        assertThat(delay).as("a retry scheduled").isNotNull();
        assertThat(delay).as("its backoff").isEqualTo(TimeUnit.MILLISECONDS.toNanos(backoffMillis));
    }

    /** Takes every retry scheduled so far that {@link #awaitBackoff} has not taken, and returns how many. */
    public int takeAll() {
        java.util.List<Long> taken = new java.util.ArrayList<>();
        delays.drainTo(taken);
        return taken.size();
    }

    /** Whether no retry was scheduled that {@link #awaitBackoff} has not taken. */
    public boolean noneLeft() {
        return delays.isEmpty();
    }

    /** The status {@code call} fails with, checked to come within {@code withinMillis} of now. */
    public static Status failsWithin(Future<?> call, long withinMillis) throws Exception {
        long start = System.nanoTime();
        try {
            call.get(withinMillis, TimeUnit.MILLISECONDS);
            throw new AssertionError("the call succeeded");
        } catch (ExecutionException e) {
            assertThat(System.nanoTime() - start).isLessThan(TimeUnit.MILLISECONDS.toNanos(withinMillis));
            return ((StatusRuntimeException) e.getCause()).getStatus();
        }
    }
}
