package io.github.grpcretry.internal.commit;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.MethodDescriptor;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class MessageSizesTest {

    @Test
    void protobufMessagesAreSizedExactlyWithoutSerialising() {
        MethodDescriptor.Marshaller<SimpleRequest> m = SimpleServiceGrpc.getUnaryRpcMethod().getRequestMarshaller();
        SimpleRequest small = SimpleRequest.newBuilder().setRequestMessage("hi").build();
        SimpleRequest big = SimpleRequest.newBuilder().setRequestMessage("x".repeat(100_000)).build();
        assertThat(MessageSizes.sizeOf(m, small)).isEqualTo(small.getSerializedSize());
        assertThat(MessageSizes.sizeOf(m, big)).isEqualTo(big.getSerializedSize());
        assertThat(MessageSizes.sizeOf(m, SimpleRequest.getDefaultInstance())).isZero();
    }

    @Test
    void otherMarshallersAreSerialisedOnceAndCounted() {
        int[] streams = new int[1];
        MethodDescriptor.Marshaller<String> strings = new MethodDescriptor.Marshaller<>() {
            @Override
            public InputStream stream(String value) {
                streams[0]++;
                // a stream whose available() is not the size
                return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8)) {
                    @Override
                    public synchronized int available() {
                        return 0;
                    }
                };
            }

            @Override
            public String parse(InputStream stream) {
                throw new UnsupportedOperationException();
            }
        };
        assertThat(MessageSizes.sizeOf(strings, "x".repeat(20_000) + "é")).isEqualTo(20_002);
        assertThat(streams[0]).isEqualTo(1);
    }
}
