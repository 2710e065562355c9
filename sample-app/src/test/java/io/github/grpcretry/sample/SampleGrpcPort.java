package io.github.grpcretry.sample;

import java.io.IOException;
import java.net.ServerSocket;
import org.springframework.test.context.DynamicPropertyRegistry;

/** The sample's gRPC server port for a test that runs the whole application: a free loopback port. */
final class SampleGrpcPort {

    private SampleGrpcPort() {
    }

    /** Sets {@code sample.grpc-port} to a port that was free a moment ago. */
    static void free(DynamicPropertyRegistry registry) throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            int port = s.getLocalPort();
            registry.add("sample.grpc-port", () -> port);
        }
    }
}
