package io.github.grpcretry.internal.commit;

/**
 * The request bytes one call holds for replay, counted against the per-RPC limit and the
 * channel's {@link RetryBufferPool}. Not thread-safe: the call guards it with its own lock.
 *
 * <p>{@link #tryAdd} returns {@code false} once either limit would be passed; the caller then
 * commits and calls {@link #release()}, which gives every reserved byte back (idempotent).
 */
public final class CallBuffer {

    private final RetryBufferPool pool;
    private final long perRpcLimit;
    private long held;
    private boolean exceeded;

    public CallBuffer(RetryBufferPool pool, long perRpcLimit) {
        this.pool = pool;
        this.perRpcLimit = perRpcLimit;
    }

    /**
     * Accounts for one more buffered message of {@code bytes}: {@code true} when it fits under both
     * limits (and is now reserved), {@code false} when it would pass either (nothing reserved; the
     * buffer stays exceeded from then on).
     */
    public boolean tryAdd(long bytes) {
        if (exceeded) {
            return false;
        }
        if (!fits(held, bytes, perRpcLimit, pool)) {
            exceeded = true;
            return false;
        }
        held += bytes;
        return true;
    }

    /**
     * The accounting rule on its own, for a holder that keeps its count in a field of its own: whether
     * {@code bytes} more fit with {@code held} under {@code perRpcLimit} and in {@code pool}; when they
     * do they are now reserved in the pool (the holder adds them to its count and gives them back with
     * {@link RetryBufferPool#release}), otherwise nothing is reserved.
     */
    public static boolean fits(long held, long bytes, long perRpcLimit, RetryBufferPool pool) {
        return held + bytes <= perRpcLimit && pool.tryReserve(bytes);
    }

    /** Gives every reserved byte back to the pool; further adds are refused. */
    public void release() {
        exceeded = true;
        long h = held;
        held = 0;
        pool.release(h);
    }

    /** Bytes reserved now. */
    public long held() {
        return held;
    }

    /** Whether a limit was passed (or the buffer was released). */
    public boolean isExceeded() {
        return exceeded;
    }
}
