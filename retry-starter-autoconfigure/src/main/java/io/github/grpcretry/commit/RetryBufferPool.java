package io.github.grpcretry.commit;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The channel-wide pool of request bytes held for replay ({@code retry-buffer-size}). One
 * {@link AtomicLong}; reservations are lock-free. A reservation that would take the total past the
 * capacity is refused (and nothing is kept), which commits the call that asked: the call goes on,
 * it just cannot be retried any more.
 */
public final class RetryBufferPool {

    private final long capacity;
    private final AtomicLong used = new AtomicLong();

    /** @param capacityBytes the most bytes all calls of the channel may hold together ({@code > 0}) */
    public RetryBufferPool(long capacityBytes) {
        if (capacityBytes < 0) {
            throw new IllegalArgumentException("capacityBytes must be >= 0: " + capacityBytes);
        }
        this.capacity = capacityBytes;
    }

    /**
     * Reserves {@code bytes}; returns {@code false} (and reserves nothing) when the channel total
     * would pass the capacity.
     */
    public boolean tryReserve(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes must be >= 0: " + bytes);
        }
        long total = used.addAndGet(bytes);
        if (total > capacity) {
            used.addAndGet(-bytes);
            return false;
        }
        return true;
    }

    /** Gives back {@code bytes} reserved earlier. */
    public void release(long bytes) {
        if (bytes != 0) {
            used.addAndGet(-bytes);
        }
    }

    /** Bytes held now by all calls of the channel. */
    public long used() {
        return used.get();
    }

    public long capacity() {
        return capacity;
    }

    @Override
    public String toString() {
        return "RetryBufferPool[used=" + used() + ", capacity=" + capacity + "]";
    }
}
