package io.github.grpcretry.internal.pushback;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.rpc.RetryInfo;
import io.grpc.Metadata;
import io.grpc.Status;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The RetryInfo reader is optional: loaded where grpc-protobuf and the common protos are missing it reports
 * itself unavailable and reads nothing, without an error; where they are present it reads the delay.
 */
class RetryInfoWithoutProtosTest {

    private static final Metadata.Key<byte[]> DETAILS =
            Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER);
    private static final List<String> HIDDEN = List.of("io.grpc.protobuf.", "com.google.rpc.", "com.google.protobuf.");

    /** Loads the reader's own classes itself and hides the proto packages; everything else from the parent. */
    private static final class WithoutProtos extends ClassLoader {
        WithoutProtos() {
            super(RetryInfoWithoutProtosTest.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                if (HIDDEN.stream().anyMatch(name::startsWith)) {
                    throw new ClassNotFoundException(name + " (hidden)");
                }
                if (!name.startsWith(RetryInfoDelay.class.getName())) {
                    return super.loadClass(name, resolve);
                }
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
                        byte[] bytes = in.readAllBytes();
                        c = defineClass(name, bytes, 0, bytes.length);
                    } catch (IOException e) {
                        throw new ClassNotFoundException(name, e);
                    }
                }
                return c;
            }
        }
    }

    private static Metadata trailersAskingFor(long seconds) {
        com.google.rpc.Status s = com.google.rpc.Status.newBuilder().setCode(Status.Code.UNAVAILABLE.value())
                .addDetails(Any.pack(RetryInfo.newBuilder().setRetryDelay(
                        com.google.protobuf.Duration.newBuilder().setSeconds(seconds)).build()))
                .build();
        Metadata trailers = new Metadata();
        trailers.put(DETAILS, s.toByteArray());
        return trailers;
    }

    @Test
    void withoutTheProtoClassesNothingIsRead() throws Exception {
        Class<?> reader = Class.forName(RetryInfoDelay.class.getName(), true, new WithoutProtos());
        assertThat(reader.getClassLoader()).isInstanceOf(WithoutProtos.class);
        Method available = reader.getMethod("available");
        Method delay = reader.getMethod("delayNanos", Status.class, Metadata.class);

        assertThat(available.invoke(null)).isEqualTo(false);
        assertThat(delay.invoke(null, Status.UNAVAILABLE, trailersAskingFor(3))).isEqualTo(RetryInfoDelay.ABSENT);
    }

    @Test
    void withTheProtoClassesTheDelayIsRead() {
        assertThat(RetryInfoDelay.available()).isTrue();
        assertThat(RetryInfoDelay.delayNanos(Status.UNAVAILABLE, trailersAskingFor(3))).isEqualTo(3_000_000_000L);
        assertThat(RetryInfoDelay.delayNanos(Status.UNAVAILABLE, new Metadata())).isEqualTo(RetryInfoDelay.ABSENT);
        assertThat(RetryInfoDelay.delayNanos(Status.UNAVAILABLE, trailersAskingFor(Long.MAX_VALUE)))
                .as("saturated").isEqualTo(Long.MAX_VALUE);
    }
}
