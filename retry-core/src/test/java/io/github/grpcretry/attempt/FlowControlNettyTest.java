package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Flow control over Netty on loopback: a server with a 64 KiB window that reads nothing until the
 * client has found the call not ready, so the window really fills and the client's writes wait for
 * {@code onReady}. The client writes 200 messages of 1 KiB only while {@code isReady()} (the pattern of
 * grpc-java's {@code setOnReadyHandler}); both engines must finish the call, the server reading all 200.
 */
class FlowControlNettyTest {

    private static final int MESSAGES = 200;
    private static final int MESSAGE_BYTES = 1024;
    private static final long WAIT_SECONDS = 20;

    @ParameterizedTest
    @EnumSource(Engines.Engine.class)
    void writesDrivenByOnReadyFinishWhenASlowReaderFillsTheWindow(Engines.Engine engine) throws Exception {
        CountDownLatch clientBlocked = new CountDownLatch(1);
        AtomicInteger read = new AtomicInteger();
        ServerCallHandler<SimpleRequest, SimpleResponse> handler = (call, h) -> {
                    Thread reader = new Thread(() -> { // reads only once the client waits for onReady
                        try {
                            if (clientBlocked.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
                                call.request(Integer.MAX_VALUE);
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }, "slow-reader");
                    reader.setDaemon(true);
                    reader.start();
                    return new ServerCall.Listener<>() {
                        @Override
                        public void onMessage(SimpleRequest message) {
                            read.incrementAndGet();
                        }

                        @Override
                        public void onHalfClose() {
                            call.sendHeaders(new Metadata());
                            call.sendMessage(SimpleResponse.newBuilder().setResponseMessage(read.toString()).build());
                            call.close(Status.OK, new Metadata());
                        }
                    };
                };
        ServerServiceDefinition def = ServerServiceDefinition.builder(Configs.SERVICE)
                .addMethod(Rpc.CLIENT_STREAMING, handler).build();
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .flowControlWindow(65_535).addService(def).build().start();
        ChannelRetryConfig config = Configs.channel(Configs.policy(3, 10, 10, 1, Status.Code.UNAVAILABLE));
        RetryScheduler scheduler = RetryScheduler.create(1, "flow");
        NettyChannelBuilder b = NettyChannelBuilder.forTarget("127.0.0.1:" + server.getPort()).usePlaintext()
                .flowControlWindow(65_535).directExecutor(); // onReady on the event loop, as soon as the stream exists
        ManagedChannel channel = engine == Engines.Engine.NATIVE
                ? b.defaultServiceConfig(config.serviceConfig().toServiceConfigMap(true)).enableRetry().build()
                : b.defaultServiceConfig(config.serviceConfig().toServiceConfigMap(false))
                        .intercept(RetryingClientInterceptor.builder(config).scheduler(scheduler).build()).build();
        try {
            ReadyWriter w = new ReadyWriter(channel.newCall(Rpc.CLIENT_STREAMING,
                    CallOptions.DEFAULT.withDeadlineAfter(WAIT_SECONDS, TimeUnit.SECONDS)), MESSAGES, MESSAGE_BYTES,
                    clientBlocked).start();
            Status s = w.listener.awaitClose(WAIT_SECONDS + 5, TimeUnit.SECONDS);
            w.listener.assertContract();
            assertThat(w.blocked.getCount()).as("the window filled: the client found the call not ready").isZero();
            assertThat(s.getCode()).as("%s: wrote %d of %d, heard %d onReady, server read %d", s, w.written.get(), MESSAGES,
                    w.readies.get(), read.get()).isEqualTo(Status.Code.OK);
            assertThat(read).hasValue(MESSAGES);
            assertThat(w.readies.get()).as("onReady heard after the window filled").isGreaterThan(1);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            scheduler.close();
        }
    }
}
