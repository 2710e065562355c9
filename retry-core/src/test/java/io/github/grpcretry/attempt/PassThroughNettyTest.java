package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
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
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A committed server stream that passes through (docs/design.md §18, "The pass-through"), over Netty on loopback with
 * the channel's own executor: the close of a call ended by the application or its listener comes after the callback
 * that is running, once, with the application's status, and the server sees the cancel. grpc-java's own retry is the
 * control. The server sends {@value #SENT} messages and keeps the stream open, so only the cancel ends it.
 */
class PassThroughNettyTest {

    private static final int SENT = 50;
    private static final long WAIT_SECONDS = 20;

    private Server server;
    private final CountDownLatch serverSawCancel = new CountDownLatch(1);
    private RetryScheduler scheduler;
    private ManagedChannel channel;

    @BeforeEach
    void startServer() throws Exception {
        ServerCallHandler<SimpleRequest, SimpleResponse> handler = (call, headers) -> {
            call.request(1);
            return new ServerCall.Listener<>() {
                @Override
                public void onHalfClose() {
                    call.sendHeaders(new Metadata());
                    for (int i = 0; i < SENT; i++) {
                        call.sendMessage(SimpleResponse.newBuilder().setResponseMessage("r" + i).build());
                    }
                }

                @Override
                public void onCancel() {
                    serverSawCancel.countDown();
                }
            };
        };
        ServerServiceDefinition def = ServerServiceDefinition.builder(Configs.SERVICE)
                .addMethod(Rpc.SERVER_STREAMING, handler).build();
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(def).build().start();
        scheduler = RetryScheduler.create(1, "pass-through");
    }

    @AfterEach
    void stop() throws Exception {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        scheduler.close();
    }

    private ClientCall<SimpleRequest, SimpleResponse> call(Engines.Engine engine) {
        ChannelRetryConfig config = Configs.channel(Configs.policy(3, 10, 10, 1, Status.Code.UNAVAILABLE));
        NettyChannelBuilder b = NettyChannelBuilder.forTarget("127.0.0.1:" + server.getPort()).usePlaintext();
        channel = engine == Engines.Engine.NATIVE
                ? b.defaultServiceConfig(config.serviceConfig().toServiceConfigMap(true)).enableRetry().build()
                : b.defaultServiceConfig(config.serviceConfig().toServiceConfigMap(false))
                        .intercept(RetryingClientInterceptor.builder(config).scheduler(scheduler).build()).build();
        return channel.newCall(Rpc.SERVER_STREAMING, CallOptions.DEFAULT.withDeadlineAfter(WAIT_SECONDS, TimeUnit.SECONDS));
    }

    /** Reads one message at a time; at message {@code at} runs {@code atMessage} instead of asking for the next. */
    private static ContractListener<SimpleResponse> reader(AtomicReference<ClientCall<SimpleRequest, SimpleResponse>> call,
            int at, Runnable atMessage) {
        AtomicInteger heard = new AtomicInteger();
        return new ContractListener<>(new ClientCall.Listener<>() {
            @Override
            public void onMessage(SimpleResponse message) {
                if (heard.incrementAndGet() == at) {
                    atMessage.run();
                } else {
                    call.get().request(1);
                }
            }
        });
    }

    private static void begin(ClientCall<SimpleRequest, SimpleResponse> call, ContractListener<SimpleResponse> listener) {
        call.start(listener, new Metadata());
        call.request(1);
        call.sendMessage(Rpc.request("stream"));
        call.halfClose();
    }

    @ParameterizedTest
    @EnumSource(Engines.Engine.class)
    void aCancelFromAnotherThreadClosesAfterTheCallbackThatIsRunning(Engines.Engine engine) throws Exception {
        AtomicReference<ClientCall<SimpleRequest, SimpleResponse>> call = new AtomicReference<>(call(engine));
        CountDownLatch inCallback = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ContractListener<SimpleResponse> listener = reader(call, 5, () -> {
            inCallback.countDown();
            try {
                release.await(WAIT_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        begin(call.get(), listener);
        assertThat(inCallback.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("message 5 reached the listener").isTrue();

        call.get().cancel("stopped by the test", null); // from this thread, while the listener is in onMessage
        assertThat(serverSawCancel.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the server saw the cancel").isTrue();
        assertThat(listener.closeCount()).as("no close while onMessage runs").isZero();
        release.countDown();

        Status s = listener.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS);
        listener.assertContract();
        assertThat(s.getCode()).isEqualTo(Status.Code.CANCELLED);
        assertThat(s.getDescription()).isEqualTo("stopped by the test");
        assertThat(listener.messages()).hasSize(5);
        assertThat(listener.closeCount()).isEqualTo(1);
    }

    @ParameterizedTest
    @EnumSource(Engines.Engine.class)
    void aCancelInsideACallbackClosesAfterItReturns(Engines.Engine engine) throws Exception {
        AtomicReference<ClientCall<SimpleRequest, SimpleResponse>> call = new AtomicReference<>(call(engine));
        AtomicInteger closesDuringTheCallback = new AtomicInteger(-1);
        AtomicReference<ContractListener<SimpleResponse>> self = new AtomicReference<>();
        ContractListener<SimpleResponse> listener = reader(call, 5, () -> {
            call.get().cancel("cancelled in onMessage", null);
            closesDuringTheCallback.set(self.get().closeCount());
        });
        self.set(listener);
        begin(call.get(), listener);

        Status s = listener.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS);
        listener.assertContract();
        assertThat(closesDuringTheCallback).as("no close inside the callback that cancelled").hasValue(0);
        assertThat(s.getCode()).isEqualTo(Status.Code.CANCELLED);
        assertThat(s.getDescription()).isEqualTo("cancelled in onMessage");
        assertThat(listener.messages()).hasSize(5);
        assertThat(serverSawCancel.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the server saw the cancel").isTrue();
    }

    @ParameterizedTest
    @EnumSource(Engines.Engine.class)
    void aListenerThatThrowsEndsTheCallOnceWithItsFailure(Engines.Engine engine) throws Exception {
        AtomicReference<ClientCall<SimpleRequest, SimpleResponse>> call = new AtomicReference<>(call(engine));
        IllegalStateException thrown = new IllegalStateException("the listener gave up");
        ContractListener<SimpleResponse> listener = reader(call, 3, () -> {
            throw thrown;
        });
        begin(call.get(), listener);

        Status s = listener.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS);
        listener.assertContract();
        assertThat(s.getCode()).isEqualTo(Status.Code.CANCELLED);
        assertThat(s.getDescription()).isEqualTo("Failed to read message.");
        assertThat(s.getCause()).isSameAs(thrown);
        assertThat(listener.messages()).hasSize(3);
        assertThat(listener.closeCount()).isEqualTo(1);
        assertThat(serverSawCancel.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the server saw the cancel").isTrue();
    }
}
