package io.github.grpcretry.internal.commit;

import io.grpc.ClientCall;
import io.grpc.Metadata;
import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The replay record of one call (docs/design.md §18): start headers, demand, the log of its other operations, and
 * the bytes held against the per-RPC limit and the channel's {@link RetryBufferPool}. An entry is the operation itself:
 * an {@link Integer} asks for messages (counted, not logged), a {@link Boolean} sets the compression,
 * {@link #HALF_CLOSE} half-closes, anything else is a message ({@link #message}: null, an Integer or a Boolean message
 * wrapped). Guarded by the call's lock.
 */
public final class CallBuffer {

    /** The entry of a half-close. */
    public static final Object HALF_CLOSE = Op.HALF_CLOSE;

    private enum Op { HALF_CLOSE }

    private record Wrapped(@Nullable Object message) {
    }

    /** A copy of non-empty start headers (null: none); each attempt after the first gets a copy of it. */
    private @Nullable Metadata headers;
    private Object @Nullable [] log;
    private int size;
    private int demand; // up to MAX_VALUE
    private long held;
    private boolean exceeded;

    /** Keeps a copy of {@code startHeaders} unless they are empty (the first attempt may change its own). */
    public void start(Metadata startHeaders) {
        if (!startHeaders.keys().isEmpty()) {
            headers = new Metadata();
            headers.merge(startHeaders);
        }
    }

    /** The headers of an attempt after the first: a copy of the start headers. */
    public Metadata attemptHeaders() {
        Metadata h = new Metadata();
        if (headers != null) {
            h.merge(headers);
        }
        return h;
    }

    /**
     * The entry of {@code sendMessage(message)}; a null message (a marshaller may take one, as grpc-java's call passes
     * it on unchecked) is wrapped as an Integer or a Boolean message is.
     */
    public static Object message(@Nullable Object message) {
        return message == null || message instanceof Integer || message instanceof Boolean ? new Wrapped(message) : message;
    }

    /** Records an operation of the application's. */
    public void add(Object entry) {
        if (entry instanceof Integer n) {
            demand = demand(demand, n);
            return;
        }
        Object[] l = log;
        log = l = l == null ? new Object[4] : size == l.length ? Arrays.copyOf(l, size * 2) : l;
        l[size++] = Objects.requireNonNull(entry);
    }

    /** {@code demand + more}, up to MAX_VALUE. */
    public static int demand(int demand, int more) {
        return (int) Math.min(Integer.MAX_VALUE, (long) demand + more);
    }

    /** The messages the application asked for in all (up to MAX_VALUE). */
    public int demand() {
        return demand;
    }

    /** Entries logged since the record was last released. */
    public int size() {
        return size;
    }

    /** Entry {@code i} (0-based) of those recorded. */
    public Object entry(int i) {
        return Objects.requireNonNull(log)[i];
    }

    /** Sends {@code entry} to {@code call}. */
    @SuppressWarnings("unchecked")
    public static <T> void replay(ClientCall<T, ?> call, Object entry) {
        if (entry instanceof Integer n) {
            call.request(n);
        } else if (entry instanceof Boolean on) {
            call.setMessageCompression(on);
        } else if (entry == HALF_CLOSE) {
            call.halfClose();
        } else {
            call.sendMessage((T) (entry instanceof Wrapped w ? w.message() : entry));
        }
    }

    /** Whether {@code entry} is a message. */
    public static boolean isMessage(Object entry) {
        return !(entry instanceof Integer || entry instanceof Boolean || entry == HALF_CLOSE);
    }

    /** How a call ends whose call below throws from {@code entry} (grpc-java's text for a message). */
    public static String failure(Object entry) {
        return entry instanceof Integer ? "Failed to request messages" : entry instanceof Boolean
                ? "Failed to set message compression" : entry == HALF_CLOSE ? "Failed to half-close" : "Failed to stream message";
    }

    /**
     * Starts the log again for an attempt that resumes a server stream: {@code request}, then the half-close when the
     * application made it, and {@code demand} messages asked for (what it asked and was not served yet). Bytes are no
     * longer counted (the call is committed): any still held go back to {@code pool}.
     */
    public void resume(RetryBufferPool pool, Object request, boolean halfClosed, int demand) {
        release(pool);
        add(message(request));
        if (halfClosed) {
            add(HALF_CLOSE);
        }
        this.demand = demand;
    }

    /** Reserves {@code bytes} more when they fit under both limits; else false, from then on (nothing reserved). */
    public boolean tryAdd(long bytes, long perRpcLimit, RetryBufferPool pool) {
        if (exceeded || !fits(held, bytes, perRpcLimit, pool)) {
            exceeded = true;
            return false;
        }
        held += bytes;
        return true;
    }

    /** Whether {@code bytes} more fit with {@code held} under {@code perRpcLimit} and in {@code pool} (reserved). */
    public static boolean fits(long held, long bytes, long perRpcLimit, RetryBufferPool pool) {
        return held + bytes <= perRpcLimit && pool.tryReserve(bytes);
    }

    /** Drops the log and gives every reserved byte back to the pool; further adds to the count are refused. */
    public void release(RetryBufferPool pool) {
        exceeded = true;
        long h = held;
        held = 0;
        pool.release(h);
        log = null;
        size = 0;
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
