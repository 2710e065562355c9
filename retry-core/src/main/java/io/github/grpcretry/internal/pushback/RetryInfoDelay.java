package io.github.grpcretry.internal.pushback;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.RetryInfo;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import org.jspecify.annotations.Nullable;

/**
 * Reads the delay a server asks for in a {@code google.rpc.RetryInfo} carried by the standard
 * {@code grpc-status-details-bin} trailer (a serialised {@code google.rpc.Status} whose details hold the
 * {@code RetryInfo}). Needs grpc-protobuf (and with it the common protos) on the class path, an optional
 * dependency of retry-core: without it {@link #available()} is false and nothing is ever read.
 *
 * <p>Never throws: a trailer that is absent, malformed or unparsable, a {@code Status} whose code is not
 * the call's, a details list without {@code RetryInfo}, a {@code RetryInfo} without delay and a negative
 * or malformed delay all read as {@link #ABSENT}. The first {@code RetryInfo} of the details counts.
 */
public final class RetryInfoDelay {

    /** No usable delay: the policy's own backoff applies. */
    public static final long ABSENT = -1;

    /** The key checked before anything is parsed (no allocation when the trailer is absent). */
    private static final Metadata.Key<byte[]> DETAILS =
            Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER);

    private static final boolean AVAILABLE = probe();

    private RetryInfoDelay() {
    }

    /** Whether the proto classes the reader needs are on the class path. */
    public static boolean available() {
        return AVAILABLE;
    }

    /**
     * The delay in nanoseconds (&ge; 0, saturated at {@link Long#MAX_VALUE}) the server asks for in the trailers
     * of an attempt that ended with {@code status}, or {@link #ABSENT}.
     */
    public static long delayNanos(Status status, @Nullable Metadata trailers) {
        if (!AVAILABLE || trailers == null || !trailers.containsKey(DETAILS)) {
            return ABSENT;
        }
        try {
            return Reader.read(status, trailers);
        } catch (RuntimeException | LinkageError e) {
            return ABSENT; // a code mismatch or an unparsable Status: ignored
        }
    }

    private static boolean probe() {
        try {
            ClassLoader loader = RetryInfoDelay.class.getClassLoader();
            Class.forName("io.grpc.protobuf.StatusProto", false, loader);
            Class.forName("com.google.rpc.RetryInfo", false, loader);
            Class.forName("com.google.protobuf.Any", false, loader);
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** The part that touches the proto classes: loaded only when they are present. */
    private static final class Reader {

        static long read(Status status, Metadata trailers) {
            com.google.rpc.Status proto = StatusProto.fromStatusAndTrailers(status, trailers); // code mismatch: throws
            if (proto == null) {
                return ABSENT;
            }
            for (Any detail : proto.getDetailsList()) {
                if (detail.is(RetryInfo.class)) {
                    return delay(detail);
                }
            }
            return ABSENT;
        }

        private static long delay(Any detail) {
            RetryInfo info;
            try {
                info = detail.unpack(RetryInfo.class);
            } catch (InvalidProtocolBufferException e) {
                return ABSENT;
            }
            if (!info.hasRetryDelay()) {
                return ABSENT;
            }
            long seconds = info.getRetryDelay().getSeconds();
            int nanos = info.getRetryDelay().getNanos();
            if (seconds < 0 || nanos < 0 || nanos > 999_999_999) {
                return ABSENT; // negative, or not a valid Duration
            }
            if (seconds >= Long.MAX_VALUE / 1_000_000_000L) {
                return Long.MAX_VALUE;
            }
            return seconds * 1_000_000_000L + nanos;
        }
    }
}
