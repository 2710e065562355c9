package io.github.grpcretry.internal.commit;

import io.grpc.ClientCall;
import io.grpc.Metadata;
import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The replay record of one call: what the application gave it (start headers, request messages as the
 * application passed them, each with the compression it was sent with, demand, half-close, compression), for
 * attempts that have not been sent it yet, and the request bytes held for it (as many as its attempt that
 * wrote the most has written), counted against the per-RPC limit and the channel's {@link RetryBufferPool}. An attempt
 * replays the record by comparing its own cursor with the counts here; the call's drain loop sends one
 * operation at a time. Not thread-safe: the call guards it with its own lock.
 */
public final class CallBuffer {

    /** An operation of the application's ({@code n}: demand, or compression on when non-zero). */
    public enum Op {
        REQUEST("Failed to request messages"), MESSAGE("Failed to stream message"), HALF_CLOSE("Failed to half-close"),
        COMPRESSION("Failed to set message compression");

        /** How the call ends when the call below throws from it (grpc-java's text for a message). */
        public final String failure;

        Op(String failure) {
            this.failure = failure;
        }

        /** Sends it to {@code call}. */
        @SuppressWarnings("unchecked")
        public <T> void apply(ClientCall<T, ?> call, int n, @Nullable Object message) {
            switch (this) {
                case REQUEST -> call.request(n);
                case MESSAGE -> call.sendMessage((T) Objects.requireNonNull(message));
                case HALF_CLOSE -> call.halfClose();
                default -> call.setMessageCompression(n != 0);
            }
        }
    }

    /** A copy of non-empty start headers (null: none); each attempt after the first gets a copy of it. */
    private @Nullable Metadata headers;
    private @Nullable Object first;
    private Object @Nullable [] later;
    private int count;
    private long demand;
    private boolean halfClosed;
    /** The message compression the application set: 0 never set, 1 off, 2 on. */
    private byte compression;
    /** The compression each message was recorded with (a retry replays it so); later ones only once set. */
    private byte firstCompression;
    private byte @Nullable [] laterCompression;
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

    /** Records an operation of the application's ({@code n}: demand, or compression on when non-zero). */
    public void record(Op op, int n, @Nullable Object message) {
        switch (op) {
            case REQUEST -> demand += n;
            case MESSAGE -> {
                if (count == 0) {
                    first = message;
                    firstCompression = compression;
                } else {
                    later = later == null ? new Object[4] : count > later.length ? Arrays.copyOf(later, count * 2) : later;
                    later[count - 1] = message;
                    if (laterCompression != null || compression != 0) {
                        laterCompression = laterCompression == null ? new byte[later.length]
                                : later.length > laterCompression.length ? Arrays.copyOf(laterCompression, later.length)
                                : laterCompression;
                        laterCompression[count - 1] = compression;
                    }
                }
                count++;
            }
            case HALF_CLOSE -> halfClosed = true;
            default -> compression = (byte) (n != 0 ? 2 : 1);
        }
    }

    /** Messages recorded since the record was last released. */
    public int count() {
        return count;
    }

    /** Message {@code i} (0-based) of those recorded. */
    public Object message(int i) {
        return i == 0 ? Objects.requireNonNull(first) : Objects.requireNonNull(later)[i - 1];
    }

    public long demand() {
        return demand;
    }

    public boolean halfClosed() {
        return halfClosed;
    }

    /** 0: never set, 1: off, 2: on. */
    public byte compression() {
        return compression;
    }

    /** The compression message {@code i} (0-based) was recorded with, as {@link #compression()} gives it. */
    public byte compressionOf(int i) {
        byte[] c = laterCompression;
        return i == 0 ? firstCompression : c == null ? 0 : c[i - 1];
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

    /** Drops the recorded messages and gives every reserved byte back to the pool; further adds are refused. */
    public void release(RetryBufferPool pool) {
        exceeded = true;
        long h = held;
        held = 0;
        pool.release(h);
        first = null;
        later = null;
        laterCompression = null;
        count = 0;
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
