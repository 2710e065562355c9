package io.github.grpcretry.attempt;

/** Package-private engine state that tests in other packages need to see (test sources only). */
public final class EngineTestAccess {

    private EngineTestAccess() {
    }

    /** Timers of {@code scheduler} that have neither fired nor been cancelled. */
    public static int outstandingTimers(RetryScheduler scheduler) {
        return scheduler.outstandingTimers();
    }

    /** The channel-wide pool of buffered request bytes of {@code engine}. */
    public static io.github.grpcretry.internal.commit.RetryBufferPool bufferPool(RetryingClientInterceptor engine) {
        return engine.bufferPool;
    }
}
