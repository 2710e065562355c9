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
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Edges of an attempt's life that the load tests reach only by chance: a retry whose channel call
 * cannot be created or fails after it started, a hedge that answers after the application cancelled,
 * and a cancellation while waiting for a retry or hedge when the call's executor refuses work. In every
 * case the application's listener is closed exactly once and every attempt reported started is
 * reported ended.
 */
class AttemptLifecycleEdgeTest {

    @RegisterExtension
    final EngineHarness harness = EngineHarness.of("attempt-lifecycle");
    private final ScriptedServer server = harness.server;

    @Test
    void aRetryWhoseChannelCallCannotBeCreatedIsReportedEnded() throws Exception {
        server.script(ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE));
        Engines.Client client = harness.client(Configs.channel(Configs.fast(3)), new OnSecondAttempt(Failure.NEW_CALL));

        Rpc.Outcome outcome = Rpc.unary(client.channel(), CallOptions.DEFAULT, "a");

        assertThat(outcome.code()).isEqualTo(Status.Code.INTERNAL);
        assertThat(outcome.status().getDescription()).isEqualTo("could not start a retry attempt");
        assertThat(outcome.listener().closeCount()).isEqualTo(1);
        RecordingEvents events = client.events();
        assertThat(events.attemptsStarted.get()).isEqualTo(2);
        assertThat(events.attemptsEnded.get()).as("the retry that never reached the channel ended too").isEqualTo(2);
        assertThat(events.callsEnded.get()).isEqualTo(1);
    }

    @Test
    void aRetryWhoseCompressionFailsAfterItsCallStartedIsCancelled() throws Exception {
        server.script(ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE));
        Engines.Client client = harness.client(Configs.channel(Configs.fast(3)),
                new OnSecondAttempt(Failure.SET_MESSAGE_COMPRESSION));

        Rpc.Handle handle = Rpc.start(client.channel(), Rpc.UNARY, CallOptions.DEFAULT);
        handle.call.setMessageCompression(true);
        Rpc.Outcome outcome = handle.send("a").halfClose().await();

        // the call below threw as the retry replayed: that attempt is cancelled, the call ends
        assertThat(outcome.code()).isEqualTo(Status.Code.CANCELLED);
        assertThat(outcome.status().getDescription()).isEqualTo("Failed to set message compression");
        assertThat(outcome.status().getCause()).hasMessage("scripted failure setting the retry's compression");
        assertThat(outcome.listener().closeCount()).isEqualTo(1);
        Arrival retry = awaitArrival(2);
        assertThat(waitFor(() -> retry.cancelled)).as("the retry's started stream was cancelled, not left open")
                .isTrue();
        RecordingEvents events = client.events();
        assertThat(waitFor(() -> events.attemptsEnded.get() == 2)).as("both attempts reported ended").isTrue();
        assertThat(events.attemptsStarted.get()).isEqualTo(2);
        assertThat(events.callsEnded.get()).isEqualTo(1);
    }

    @Test
    void cancelDuringRetryWaitClosesListenerWhenExecutorRefuses() throws Exception {
        cancelWhileWaiting(Configs.channel(Configs.policy(3, 60_000, 60_000, 1, Status.Code.UNAVAILABLE)),
                Action.fail(Status.Code.UNAVAILABLE), "retryScheduled");
    }

    @Test
    void cancelDuringHedgeWaitClosesListenerWhenExecutorRefuses() throws Exception {
        // the pushback holds the next hedge back for a minute (a non-fatal failure alone would send it at once)
        cancelWhileWaiting(Configs.channel(Configs.hedged(Configs.hedging(3, 60_000, Status.Code.UNAVAILABLE))),
                Action.fail(Status.Code.UNAVAILABLE).pushback("60000"), "attemptEnded");
    }

    private void cancelWhileWaiting(io.github.grpcretry.policy.ChannelRetryConfig config, Action answer,
            String waitingEvent) throws Exception {
        server.script(a -> answer);
        Engines.Client client = harness.client(config);
        RefusingExecutor executor = new RefusingExecutor();
        try {
            Rpc.Handle handle = Rpc.start(client.channel(), Rpc.UNARY, CallOptions.DEFAULT.withExecutor(executor))
                    .send("a").halfClose();
            RecordingEvents events = client.events();
            assertThat(waitFor(() -> !events.ofType(waitingEvent).isEmpty()))
                    .as("the first attempt failed and the call waits for the next").isTrue();
            executor.refuse.set(true);

            handle.call.cancel("the application gave up", null);

            Status status = handle.listener.awaitClose(10, TimeUnit.SECONDS);
            assertThat(status.getCode()).isEqualTo(Status.Code.CANCELLED);
            assertThat(handle.listener.closeCount()).isEqualTo(1);
            handle.listener.assertContract();
            assertThat(executor.refused.get()).as("the executor refused the close").isPositive();
        } finally {
            executor.pool.shutdownNow();
        }
    }

    @Test
    void aHedgeThatAnswersAfterTheApplicationCancelledDeliversNothing() throws Exception {
        String name = "late-answer-" + System.nanoTime();
        CountDownLatch arrived = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch messagePassedBelowEngine = new CountDownLatch(1);
        ExecutorService serverExecutor = Executors.newCachedThreadPool();
        Server lateServer = InProcessServerBuilder.forName(name).executor(serverExecutor)
                .addService(ServerServiceDefinition.builder(SimpleServiceGrpc.SERVICE_NAME)
                        .addMethod(SimpleServiceGrpc.getUnaryRpcMethod(), ServerCalls.asyncUnaryCall(
                                (SimpleRequest request, StreamObserver<SimpleResponse> out) -> {
                                    arrived.countDown();
                                    try {
                                        release.await(10, TimeUnit.SECONDS);
                                    } catch (InterruptedException e) {
                                        Thread.currentThread().interrupt();
                                    }
                                    out.onNext(SimpleResponse.newBuilder().setResponseMessage("late").build());
                                    out.onCompleted();
                                }))
                        .build())
                .build().start();
        RecordingEvents events = new RecordingEvents();
        RetryingClientInterceptor engine = RetryingClientInterceptor.builder(
                        Configs.channel(Configs.hedged(Configs.hedging(2, 60_000, Status.Code.UNAVAILABLE))))
                .eventListener(events)
                .scheduler(harness.scheduler)
                .build();
        // Below the engine: the cancellation reaches the attempt only after the server's answer passed it.
        ClientInterceptor holdCancel = new ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                    CallOptions callOptions, Channel next) {
                return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
                    @Override
                    public void start(Listener<RespT> listener, Metadata headers) {
                        super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                            @Override
                            public void onMessage(RespT message) {
                                super.onMessage(message);
                                messagePassedBelowEngine.countDown();
                            }
                        }, headers);
                    }

                    @Override
                    public void cancel(String message, Throwable cause) {
                        release.countDown();
                        try {
                            messagePassedBelowEngine.await(10, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        super.cancel(message, cause);
                    }
                };
            }
        };
        ManagedChannel channel = InProcessChannelBuilder.forName(name).intercept(holdCancel).intercept(engine).build();
        try {
            Rpc.Handle handle = Rpc.start(channel, Rpc.UNARY, CallOptions.DEFAULT).send("a").halfClose();
            assertThat(arrived.await(10, TimeUnit.SECONDS)).isTrue();

            handle.call.cancel("the application gave up", null);

            Status status = handle.listener.awaitClose(10, TimeUnit.SECONDS);
            assertThat(messagePassedBelowEngine.getCount()).as("the answer reached the engine").isZero();
            assertThat(status.getCode()).isEqualTo(Status.Code.CANCELLED);
            assertThat(handle.listener.headersCount()).as("no headers after the cancellation").isZero();
            assertThat(handle.listener.messages()).as("no message after the cancellation").isEmpty();
            handle.listener.assertContract();
            assertThat(events.ofType("committed")).as("a cancelled call commits to nothing").isEmpty();
            assertThat(waitFor(() -> events.attemptsEnded.get() == 1)).isTrue();
        } finally {
            release.countDown();
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            lateServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            serverExecutor.shutdownNow();
            assertThat(EngineTestAccess.bufferPool(engine).used()).isZero();
        }
    }

    private Arrival awaitArrival(int index) throws InterruptedException {
        assertThat(waitFor(() -> server.arrivalCount() >= index)).as("arrival " + index).isTrue();
        return server.arrivals().get(index - 1);
    }

    /** Polls {@code condition} (the server's record or the engine's events) for up to 10 s. */
    private static boolean waitFor(BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                return false;
            }
            Thread.sleep(1); // a poll interval, not a synchronisation point: the condition decides
        }
        return true;
    }

    enum Failure { NEW_CALL, SET_MESSAGE_COMPRESSION }

    /** Below the engine: the second attempt fails as {@code failure} says; the first goes through. */
    private static final class OnSecondAttempt implements ClientInterceptor {
        private final Failure failure;
        private final AtomicInteger attempts = new AtomicInteger();

        OnSecondAttempt(Failure failure) {
            this.failure = failure;
        }

        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                CallOptions callOptions, Channel next) {
            boolean second = attempts.incrementAndGet() == 2;
            if (second && failure == Failure.NEW_CALL) {
                throw new IllegalStateException("scripted failure creating the retry's call");
            }
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
                @Override
                public void setMessageCompression(boolean enabled) {
                    if (second) {
                        throw new IllegalStateException("scripted failure setting the retry's compression");
                    }
                    super.setMessageCompression(enabled);
                }
            };
        }
    }

    /** Runs tasks on a pool until told to refuse them (an application executor being shut down). */
    private static final class RefusingExecutor implements java.util.concurrent.Executor {
        final ExecutorService pool = Executors.newCachedThreadPool();
        final AtomicBoolean refuse = new AtomicBoolean();
        final AtomicInteger refused = new AtomicInteger();

        @Override
        public void execute(Runnable command) {
            if (refuse.get()) {
                refused.incrementAndGet();
                throw new RejectedExecutionException("shut down");
            }
            pool.execute(command);
        }
    }
}
