package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ServerCalls;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A losing hedge whose server answer lands between the demand the engine adds when it cancels the
 * loser and the cancellation itself, while the application's own {@code request(1)} is still
 * outstanding on that stream. grpc-java's in-process transport adds demand in an {@code int} without
 * saturating: had the engine asked for {@code Integer.MAX_VALUE} more, the demand would wrap negative,
 * the answer would stay queued, the cancellation would find the stream closed, and the attempt's
 * {@code onClose} would never run (no {@code attemptEnded}, a per-attempt interceptor never closed).
 *
 * <p>The interleaving is forced, not hoped for: an interceptor below the engine holds the loser's
 * {@code cancel} until the server has answered that attempt.
 */
class HedgingLoserDemandTest {

    private static final Metadata.Key<String> PREVIOUS_ATTEMPTS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);
    private static final Context.Key<String> ATTEMPT = Context.key("attempt");

    private final CountDownLatch hedgeArrived = new CountDownLatch(1);
    private final CountDownLatch releaseHedge = new CountDownLatch(1);
    private final CountDownLatch hedgeAnswered = new CountDownLatch(1);
    private final CountDownLatch hedgeClosedBelowEngine = new CountDownLatch(1);
    private final AtomicReference<Status> hedgeCloseStatus = new AtomicReference<>();

    private ExecutorService serverExecutor;
    private Server server;
    private RetryScheduler scheduler;
    private ManagedChannel channel;
    private RecordingEvents events;
    private RetryingClientInterceptor engine;

    @BeforeEach
    void setUp() throws Exception {
        String name = "hedging-loser-demand-" + System.nanoTime();
        serverExecutor = Executors.newCachedThreadPool();
        server = InProcessServerBuilder.forName(name).executor(serverExecutor)
                .addService(ServerInterceptors.intercept(service(), new AttemptNumber()))
                .build().start();
        scheduler = RetryScheduler.create(1, "test-loser-demand");
        events = new RecordingEvents();
        engine = RetryingClientInterceptor.builder(
                        Configs.channel(Configs.hedged(Configs.hedging(2, 0, Status.Code.UNAVAILABLE))))
                .eventListener(events)
                .scheduler(scheduler)
                .build();
        channel = InProcessChannelBuilder.forName(name)
                .intercept(new HoldLoserCancelUntilAnswered()) // below the engine: sees every attempt
                .intercept(engine)
                .build();
    }

    @AfterEach
    void tearDown() throws Exception {
        releaseHedge.countDown();
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        serverExecutor.shutdownNow();
        assertThat(EngineTestAccess.bufferPool(engine).used()).as("bytes held after the test").isZero();
        assertThat(scheduler.outstandingTimers()).as("timers outstanding after the test").isZero();
        scheduler.close();
    }

    @Test
    void aLoserAnsweredBetweenTheDemandAndTheCancelStillEnds() throws Exception {
        Rpc.Outcome outcome = Rpc.unary(channel, CallOptions.DEFAULT, "hello");
        assertThat(outcome.code()).isEqualTo(Status.Code.OK);
        assertThat(outcome.responses()).containsExactly("winner");
        assertThat(hedgeAnswered.await(10, TimeUnit.SECONDS)).as("the server answered the hedge").isTrue();

        assertThat(hedgeClosedBelowEngine.await(10, TimeUnit.SECONDS))
                .as("the losing hedge's call was closed (its onClose ran)").isTrue();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (events.attemptsEnded.get() < 2 && System.nanoTime() < end) {
            Thread.sleep(1); // polls for an event that follows the close above on the same thread
        }
        assertThat(events.attemptsStarted.get()).isEqualTo(2);
        assertThat(events.attemptsEnded.get()).as("every started attempt reported ended").isEqualTo(2);
        assertThat(hedgeCloseStatus.get()).isNotNull();
    }

    /** Attempt 0 answers once the hedge is on the server; the hedge answers when the test says so. */
    private ServerServiceDefinition service() {
        return ServerServiceDefinition.builder(SimpleServiceGrpc.SERVICE_NAME)
                .addMethod(SimpleServiceGrpc.getUnaryRpcMethod(), ServerCalls.asyncUnaryCall(
                        (SimpleRequest request, io.grpc.stub.StreamObserver<SimpleResponse> out) -> {
                            try {
                                if (ATTEMPT.get() == null) {
                                    hedgeArrived.await(10, TimeUnit.SECONDS);
                                    out.onNext(SimpleResponse.newBuilder().setResponseMessage("winner").build());
                                    out.onCompleted();
                                } else {
                                    hedgeArrived.countDown();
                                    releaseHedge.await(10, TimeUnit.SECONDS);
                                    out.onNext(SimpleResponse.newBuilder().setResponseMessage("loser").build());
                                    out.onCompleted();
                                    hedgeAnswered.countDown(); // in-process: the answer is on the client's stream
                                }
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                                out.onError(Status.CANCELLED.asRuntimeException());
                            }
                        }))
                .build();
    }

    /** Puts the request's {@code grpc-previous-rpc-attempts} into the handler's Context. */
    private static final class AttemptNumber implements ServerInterceptor {
        @Override
        public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                ServerCallHandler<ReqT, RespT> next) {
            return Contexts.interceptCall(Context.current().withValue(ATTEMPT, headers.get(PREVIOUS_ATTEMPTS)),
                    call, headers, next);
        }
    }

    /**
     * On the hedge's call: lets the server answer when the engine cancels the call, and forwards the
     * cancellation only once that answer is on the client's stream (after the demand the engine
     * added first). Records the hedge's close.
     */
    private final class HoldLoserCancelUntilAnswered implements ClientInterceptor {
        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                CallOptions callOptions, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
                private boolean hedge;

                @Override
                public void start(Listener<RespT> listener, Metadata headers) {
                    hedge = headers.get(PREVIOUS_ATTEMPTS) != null;
                    if (!hedge) {
                        super.start(listener, headers);
                        return;
                    }
                    super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                        @Override
                        public void onClose(Status status, Metadata trailers) {
                            hedgeCloseStatus.set(status);
                            hedgeClosedBelowEngine.countDown();
                            super.onClose(status, trailers);
                        }
                    }, headers);
                }

                @Override
                public void cancel(String message, Throwable cause) {
                    if (hedge) {
                        releaseHedge.countDown();
                        try {
                            hedgeAnswered.await(10, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    super.cancel(message, cause);
                }
            };
        }
    }
}
