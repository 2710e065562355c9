package io.github.grpcretry.internal.pushback;

import io.grpc.Metadata;
import java.util.Iterator;
import org.jspecify.annotations.Nullable;

/**
 * Reads the server's {@code grpc-retry-pushback-ms} trailer (gRFC A6) into one primitive, without
 * exceptions and without allocation when the trailer is absent.
 *
 * <ul>
 *   <li>{@link #ABSENT}: no value; the client uses its normal backoff;</li>
 *   <li>{@link #STOP}: a negative value, a value that is not a 32-bit decimal integer, or more than
 *       one value: the client must not retry, and the failure counts against the throttle;</li>
 *   <li>{@code >= 0}: retry after exactly this many milliseconds (and restart the backoff).</li>
 * </ul>
 *
 * <p>Several values mean "stop" as in grpc-go; grpc-java takes the last value instead.
 */
public final class Pushback {

    /** The trailer key. */
    public static final Metadata.Key<String> KEY =
            Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER);

    /** No pushback trailer. */
    public static final long ABSENT = -1;
    /** The server said not to retry (negative, malformed or repeated value). */
    public static final long STOP = -2;

    private Pushback() {
    }

    /** The pushback in {@code trailers}: {@link #ABSENT}, {@link #STOP} or a delay in ms (>= 0). */
    public static long parse(@Nullable Metadata trailers) {
        if (trailers == null || !trailers.containsKey(KEY)) {
            return ABSENT;
        }
        return parse(trailers.getAll(KEY));
    }

    /** The pushback given by the trailer's values ({@code null} or empty = absent). */
    public static long parse(@Nullable Iterable<String> values) {
        if (values == null) {
            return ABSENT;
        }
        Iterator<String> it = values.iterator();
        if (!it.hasNext()) {
            return ABSENT;
        }
        String value = it.next();
        if (it.hasNext()) {
            return STOP;
        }
        return parseValue(value);
    }

    /** One value: a delay in ms (>= 0), or {@link #STOP} when it is negative or not a 32-bit integer. */
    public static long parseValue(@Nullable String value) {
        if (value == null) {
            return STOP;
        }
        int len = value.length();
        if (len == 0) {
            return STOP;
        }
        int i = 0;
        boolean negative = false;
        char first = value.charAt(0);
        if (first == '-' || first == '+') {
            negative = first == '-';
            i = 1;
            if (len == 1) {
                return STOP;
            }
        }
        long result = 0;
        for (; i < len; i++) {
            char c = value.charAt(i);
            if (c < '0' || c > '9') {
                return STOP;
            }
            result = result * 10 + (c - '0');
            if (result > (long) Integer.MAX_VALUE + 1) {
                return STOP;
            }
        }
        if (negative && result != 0) {
            return STOP; // any well-formed negative value means "do not retry"
        }
        if (result > Integer.MAX_VALUE) {
            return STOP;
        }
        return result;
    }

    /** Whether {@code pushback} (a result of {@link #parse}) tells the client to stop. */
    public static boolean isStop(long pushback) {
        return pushback == STOP;
    }

    /** Whether {@code pushback} (a result of {@link #parse}) is an explicit delay. */
    public static boolean isDelay(long pushback) {
        return pushback >= 0;
    }
}
