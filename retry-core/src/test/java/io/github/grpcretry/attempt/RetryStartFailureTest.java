package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A retry attempt that fails while it is being started (an interceptor below the engine throws from
 * {@code sendMessage} during the replay) after the server's headers committed the call to it: the
 * call ends once, CANCELLED "Failed to stream message" with the exception as the cause, the attempt's stream is cancelled rather than left open on the
 * server, and the attempt's own close, which follows that cancellation, does not close the
 * application's listener a second time.
 */
class RetryStartFailureTest {

    @RegisterExtension
    final EngineHarness harness = EngineHarness.of("retry-start-failure");
    private final ScriptedServer server = harness.server;
    private ManagedChannel channel;
    private final CountDownLatch secondAttemptHeaders = new CountDownLatch(1);
    private final CallbackExecutor callbacks = new CallbackExecutor();
    /** The second attempt's own close, delivered (through this interceptor) to the engine and handled. */
    private final CountDownLatch secondAttemptClosed = new CountDownLatch(1);

    @BeforeEach
    void setUp() throws Exception {
        channel = harness.client(Configs.channel(Configs.service(Configs.policy(3, 20, 20, 1, Status.Code.UNAVAILABLE), null)), new ThrowOnSecondAttemptsSecondMessage()).channel();
    }

    @AfterEach
    void tearDown() throws Exception {
        callbacks.close();
    }

    @Test
    void aRetryThatFailsToStartEndsTheCallOnceAndCancelsItsStream() throws Exception {
        server.script(a -> a.index == 1 ? Action.fail(Status.Code.UNAVAILABLE) : Action.ok());
        ClientCall<SimpleRequest, SimpleResponse> call = channel.newCall(Rpc.BIDI, CallOptions.DEFAULT.withExecutor(callbacks));
        ContractListener<SimpleResponse> listener = new ContractListener<>();
        call.start(listener, new Metadata());
        call.request(10);
        call.sendMessage(Rpc.request("a"));
        call.sendMessage(Rpc.request("b"));

        Status status = listener.awaitClose(10, TimeUnit.SECONDS);
        // as grpc-java's ClientCallImpl closes a call whose stream failed to take a message
        assertThat(status.getCode()).isEqualTo(Status.Code.CANCELLED);
        assertThat(status.getDescription()).isEqualTo("Failed to stream message");
        assertThat(status.getCause()).hasMessage("scripted failure while replaying");
        Arrival second = awaitArrival(2);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!second.cancelled && System.nanoTime() < end) {
            Thread.sleep(2); // polls the server's record (the event), not a synchronisation point
        }
        assertThat(second.cancelled).as("the failed retry's stream was cancelled").isTrue();
        // the attempt's own close, which follows the cancellation, has reached the engine and been handled, and
        // no callback of the call is queued or running: a second close of the listener would have come
        assertThat(secondAttemptClosed.await(10, TimeUnit.SECONDS)).as("the retry's own close").isTrue();
        RetryEngineTest.waitFor(callbacks::idle);
        assertThat(listener.closeCount()).isEqualTo(1);
        listener.assertContract();
    }

    private Arrival awaitArrival(int index) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (server.arrivalCount() < index && System.nanoTime() < end) {
            Thread.sleep(2); // polls the server's record (the event), not a synchronisation point
        }
        assertThat(server.arrivalCount()).isGreaterThanOrEqualTo(index);
        return server.arrivals().get(index - 1);
    }

    /**
     * Below the engine: on the second attempt, lets the first message through (the server answers it
     * with headers, which commit the call) and throws on the second once those headers arrived.
     */
    private final class ThrowOnSecondAttemptsSecondMessage implements ClientInterceptor {
        private final AtomicInteger attempts = new AtomicInteger();

        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                CallOptions callOptions, Channel next) {
            boolean second = attempts.incrementAndGet() == 2;
            AtomicInteger sent = new AtomicInteger();
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
                @Override
                public void start(Listener<RespT> listener, Metadata headers) {
                    super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                        @Override
                        public void onHeaders(Metadata responseHeaders) {
                            super.onHeaders(responseHeaders);
                            if (second) {
                                secondAttemptHeaders.countDown();
                            }
                        }

                        @Override
                        public void onClose(Status status, Metadata trailers) {
                            try {
                                super.onClose(status, trailers);
                            } finally {
                                if (second) {
                                    secondAttemptClosed.countDown();
                                }
                            }
                        }
                    }, headers);
                }

                @Override
                public void sendMessage(ReqT message) {
                    if (second && sent.incrementAndGet() == 2) {
                        try {
                            secondAttemptHeaders.await(10, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        throw new IllegalStateException("scripted failure while replaying");
                    }
                    super.sendMessage(message);
                }
            };
        }
    }
}
