package io.github.grpcretry.internal.commit;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The channel-wide pool of request bytes held for replay ({@code retry-buffer-size}). One
 * {@link AtomicLong}; reservations are lock-free (compare-and-set), and the total never passes the
 * capacity, not even transiently. A reservation that would take the total past the
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
        // compare-and-set, not add-then-take-back: a refused reservation must never be visible, not
        // even for an instant (used() is read as "bytes held", and must stay within the capacity)
        while (true) {
            long current = used.get();
            long next = current + bytes;
            if (next > capacity || next < 0) {
                return false;
            }
            if (used.compareAndSet(current, next)) {
                return true;
            }
        }
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
