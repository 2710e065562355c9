package io.github.grpcretry.attempt;

/** Package-private engine state that tests in other packages need to see (test sources only). */
public final class EngineTestAccess {

    private EngineTestAccess() {
    }

    /**
     * Timers of {@code scheduler} that have neither fired nor been cancelled: the scheduler's pending set (which
     * its {@code close()} ends), read here so that the main code keeps no count for tests.
     */
    public static int outstandingTimers(RetryScheduler scheduler) {
        try {
            java.lang.reflect.Field pending = RetryScheduler.class.getDeclaredField("pending");
            pending.setAccessible(true);
            return ((java.util.Set<?>) pending.get(scheduler)).size();
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("RetryScheduler keeps its pending timers in a field named pending", e);
        }
    }

    /** The channel-wide pool of buffered request bytes of {@code engine}. */
    public static io.github.grpcretry.internal.commit.RetryBufferPool bufferPool(RetryingClientInterceptor engine) {
        return engine.bufferPool;
    }
}
