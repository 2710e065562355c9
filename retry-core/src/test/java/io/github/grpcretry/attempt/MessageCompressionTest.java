package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link ClientCall#setMessageCompression} reaches every attempt: set before the call starts, while it
 * waits for a retry, and while a retry attempt is still catching up on the replay; a replay sends each
 * message with the setting it was sent with (the setting goes where the application made it, between the
 * messages before and after it). A recording interceptor below the engine sees each attempt's call.
 */
class MessageCompressionTest {

    @RegisterExtension
    final EngineHarness harness = EngineHarness.of("compression");
    private final ScriptedServer server = harness.server;
    private ManagedChannel channel;
    private final List<List<String>> attempts = Collections.synchronizedList(new ArrayList<>());
    /** Blocks the attempt's sendMessage of the matching message (on the thread replaying it). */
    private volatile Predicate<String> blockOn = m -> false;
    private final CountDownLatch blocked = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);

    @BeforeEach
    void setUp() throws Exception {
        channel = harness.client(Configs.channel(Configs.service(Configs.policy(3, 300, 300, 1, Status.Code.UNAVAILABLE), null)), new Recorder()).channel();
    }

    @AfterEach
    void tearDown() throws Exception {
        release.countDown();
    }

    @Test
    void compressionSetBeforeStartIsRefusedAsGrpcJavaRefusesItAndTheCallGoesOn() throws Exception {
        server.script(a -> a.index <= 2 ? Action.failOnHalfClose(Status.Code.UNAVAILABLE) : Action.ok());
        ClientCall<SimpleRequest, SimpleResponse> call = channel.newCall(Rpc.UNARY, CallOptions.DEFAULT);
        assertThatThrownBy(() -> call.setMessageCompression(false)).isInstanceOf(IllegalStateException.class)
                .hasMessage("Not started");
        Rpc.Outcome o = started(call).send("x").halfClose().await();

        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(attempts).hasSize(3).allSatisfy(ops ->
                assertThat(ops).containsExactly("start", "send x", "halfClose"));
    }

    @Test
    void compressionSetWhileWaitingForARetryIsReplayedWhereItWasSet() throws Exception {
        Rpc.Handle h = streamWhoseFirstAttemptFailed();
        h.call.setMessageCompression(true);
        Rpc.Outcome o = h.send("b").halfClose().await();

        assertThat(o.code()).isEqualTo(Status.Code.OK);
        // the first attempt may fail before or after "a" reaches it; either way it got no compression call
        assertThat(attempts.get(0)).startsWith("start").doesNotContain("compression=true");
        // "a" went uncompressed: the retry sends it so, the setting before "b" (grpc-java replays the same order;
        // on the wire: SendPathSideBySideTest.eachMessageIsReplayedWithTheCompressionItWasSentWith)
        assertThat(attempts.get(1)).containsExactly("start", "send a", "compression=true", "send b", "halfClose");
    }

    @Test
    void compressionSetDuringReplayAppliesBeforeLaterMessages() throws Exception {
        Rpc.Handle h = streamWhoseFirstAttemptFailed();
        blockOn = m -> attempts.size() == 2 && m.equals("a"); // the retry's replay of "a" waits for us
        assertThat(blocked.await(10, TimeUnit.SECONDS)).as("the retry replays the first message").isTrue();
        h.call.setMessageCompression(true); // the retry is live but has not caught up
        h.send("b");
        release.countDown();
        Rpc.Outcome o = h.halfClose().await();

        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(attempts.get(1)).containsExactly("start", "send a", "compression=true", "send b", "halfClose");
    }

    /** A client stream that sent "a" and whose first attempt failed: the retry waits about 300 ms. */
    private Rpc.Handle streamWhoseFirstAttemptFailed() throws InterruptedException {
        server.script(a -> a.index == 1 ? Action.fail(Status.Code.UNAVAILABLE) : Action.ok());
        Rpc.Handle h = started(channel.newCall(Rpc.CLIENT_STREAMING, CallOptions.DEFAULT)).send("a");
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (closed.isEmpty() && System.nanoTime() < end) {
            Thread.sleep(2); // polls for the first attempt's close (the event), not a synchronisation point
        }
        assertThat(closed).as("the first attempt closed").hasSize(1);
        return h;
    }

    private static Rpc.Handle started(ClientCall<SimpleRequest, SimpleResponse> call) {
        ContractListener<SimpleResponse> listener = new ContractListener<>(new ClientCall.Listener<>() {
        });
        call.start(listener, new Metadata());
        call.request(1);
        return new Rpc.Handle(call, listener);
    }

    private final List<Status> closed = Collections.synchronizedList(new ArrayList<>());

    /** Records what the engine does to each attempt's call, in order. */
    private final class Recorder implements ClientInterceptor {
        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                CallOptions callOptions, Channel next) {
            List<String> ops = Collections.synchronizedList(new ArrayList<>());
            attempts.add(ops);
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
                @Override
                public void start(Listener<RespT> listener, Metadata headers) {
                    ops.add("start");
                    super.start(new io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener<>(
                            listener) {
                        @Override
                        public void onClose(Status status, Metadata trailers) {
                            closed.add(status);
                            super.onClose(status, trailers);
                        }
                    }, headers);
                }

                @Override
                public void setMessageCompression(boolean enabled) {
                    ops.add("compression=" + enabled);
                    super.setMessageCompression(enabled);
                }

                @Override
                public void sendMessage(ReqT message) {
                    String m = ((SimpleRequest) message).getRequestMessage();
                    ops.add("send " + m);
                    if (blockOn.test(m)) {
                        blocked.countDown();
                        try {
                            release.await(10, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    super.sendMessage(message);
                }

                @Override
                public void halfClose() {
                    ops.add("halfClose");
                    super.halfClose();
                }
            };
        }
    }
}
