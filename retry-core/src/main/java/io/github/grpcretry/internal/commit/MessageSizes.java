package io.github.grpcretry.internal.commit;

import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import java.io.IOException;
import java.io.InputStream;

/**
 * The serialised size of a request message. grpc-java's protobuf marshallers return a stream that
 * implements {@link KnownLength}, whose {@code available()} is the exact size (protobuf memoises
 * it, so nothing is serialised). Other marshallers are serialised once and counted.
 */
public final class MessageSizes {

    private static final ThreadLocal<byte[]> SCRATCH = ThreadLocal.withInitial(() -> new byte[8192]);

    private MessageSizes() {
    }

    /** The size of {@code message} in bytes as {@code marshaller} would send it. */
    public static <T> long sizeOf(MethodDescriptor.Marshaller<T> marshaller, T message) {
        InputStream in = marshaller.stream(message);
        try {
            if (in instanceof KnownLength) {
                int n = in.available();
                if (n >= 0) {
                    return n;
                }
            }
            return count(in);
        } catch (IOException e) {
            throw new IllegalStateException("could not measure the request message", e);
        } finally {
            try {
                in.close();
            } catch (IOException ignored) {
                // nothing held
            }
        }
    }

    private static long count(InputStream in) throws IOException {
        byte[] scratch = SCRATCH.get();
        long total = 0;
        int n;
        while ((n = in.read(scratch)) != -1) {
            total += n;
        }
        return total;
    }
}
