package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The application's {@code cancel()} racing the start of the call and of its attempts, on a channel
 * that keeps grpc-java's retry on below the engine (as a Netty channel does: transparent retries), so
 * every attempt is itself a grpc-java retriable stream. grpc-java's own retry has two open defects in
 * this race: a stream cancelled while its {@code start()} runs is registered afterwards in the
 * channel's registry of uncommitted retriable streams and never leaves it, so a graceful
 * {@code shutdown()} never terminates; and a cancel that reaches the stream before its listener is set
 * throws a NullPointerException back out of {@code cancel()}. The engine must not expose either:
 * every cancel returns normally, every started call closes exactly once, and the channel terminates
 * after {@code shutdown()} (docs/reliability.md).
 */
class CancelStartRaceTest {

    private static final int CALLS = Integer.getInteger("race.calls", 2_000);
    /**
     * {@code -Drace.nativeRetry=true}: the same races on grpc-java's own retry instead of the engine, which
     * shows they are reached (it fails them: a call that never closes, a NullPointerException out of
     * {@code start()} or {@code cancel()}, a channel that does not terminate).
     */
    private static final boolean NATIVE_RETRY = Boolean.getBoolean("race.nativeRetry");
    private static final long CLOSE_SECONDS = 10;
    private static final long TERMINATION_SECONDS = 10;

    @RegisterExtension
    final EngineHarness harness = EngineHarness.of("cancel-start-race");

    private final ExecutorService cancellers = Executors.newFixedThreadPool(2, r -> {
        Thread t = new Thread(r, "race-canceller");
        t.setDaemon(true);
        return t;
    });
    private final SplittableRandom random = new SplittableRandom(13_034L);
    private RetryingClientInterceptor interceptor;
    private final List<Throwable> thrownByCancel = new CopyOnWriteArrayList<>();

    @AfterEach
    void stopCancellers() {
        cancellers.shutdownNow();
    }

    /** Our engine over a channel whose own retry stays enabled below it (transparent retries only). */
    private ManagedChannel channel(ChannelRetryConfig config) {
        interceptor = RetryingClientInterceptor.builder(config).scheduler(harness.scheduler).build();
        if (NATIVE_RETRY) {
            return InProcessChannelBuilder.forName(harness.server.inProcessName())
                    .defaultServiceConfig(config.serviceConfig().toServiceConfigMap(true)).enableRetry().build();
        }
        return InProcessChannelBuilder.forName(harness.server.inProcessName())
                .defaultServiceConfig(config.serviceConfig().toServiceConfigMap(false))
                .enableRetry()
                .intercept(interceptor)
                .build();
    }

    /** Busy-waits a few microseconds at random, so the two sides of the race meet at different points. */
    private static void spin(int iterations) {
        long x = 0;
        for (int i = 0; i < iterations; i++) {
            x += System.nanoTime() & 1;
        }
        if (x < 0) {
            throw new AssertionError();
        }
    }

    /**
     * Runs {@code cancel} on another thread a random few microseconds after both sides passed
     * {@code barrier}, recording what it throws.
     */
    private Future<?> cancelSoon(Runnable cancel, CyclicBarrier barrier) {
        int delay = random.nextInt(400);
        return cancellers.submit(() -> {
            barrier.await();
            spin(delay);
            try {
                cancel.run();
            } catch (RuntimeException e) {
                thrownByCancel.add(e);
            }
            return null;
        });
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await(CLOSE_SECONDS, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("the canceller did not come", e);
        }
    }

    /** Asks for the answer and sends the request; a cancel that came first may refuse them, as grpc-java's does. */
    private static void sendRequest(ClientCall<SimpleRequest, SimpleResponse> call) {
        try {
            call.request(1);
            call.sendMessage(Rpc.request("q"));
            call.halfClose();
        } catch (IllegalStateException e) {
            assertThat(e).hasMessageContaining("cancel");
        }
    }

    /** Shuts the channel down gracefully: it must terminate (a stream left in grpc-java's registry stops it). */
    private void assertTerminatesGracefully(ManagedChannel channel) throws InterruptedException {
        channel.shutdown();
        assertThat(channel.awaitTermination(TERMINATION_SECONDS, TimeUnit.SECONDS))
                .as("channel terminated after shutdown(): no stream left registered").isTrue();
        if (!NATIVE_RETRY) {
            assertThat(EngineTestAccess.bufferPool(interceptor).used()).as("request bytes held after the calls").isZero();
        }
    }

    /**
     * {@code start()} on one thread, {@code cancel()} on another at the same moment, on calls whose
     * attempts the server holds open (first arrival) or fails at once for a retry (the rest): the
     * cancel meets the call before, during and after the start of its first attempt and of its retries.
     */
    @Test
    void cancelRacingStartLeavesNoStreamThatBlocksShutdown() throws Exception {
        harness.server.script(a -> a.index % 3 == 0 ? Action.ok() : Action.fail(Status.Code.UNAVAILABLE));
        ManagedChannel channel = channel(Configs.channel(Configs.policy(5, 1, 2, 1, Status.Code.UNAVAILABLE)));
        for (int i = 0; i < CALLS; i++) {
            ClientCall<SimpleRequest, SimpleResponse> call = channel.newCall(Rpc.UNARY, CallOptions.DEFAULT);
            ContractListener<SimpleResponse> listener = new ContractListener<>();
            CyclicBarrier barrier = new CyclicBarrier(2);
            Future<?> cancel = cancelSoon(() -> call.cancel("cancelled by the application", null), barrier);
            await(barrier);
            boolean started = false;
            try {
                call.start(listener, new Metadata());
                started = true;
            } catch (IllegalStateException e) {
                // the cancel came first: grpc-java's ClientCall refuses a start after cancel too
                assertThat(e).hasMessageContaining("cancel");
            }
            if (started) {
                sendRequest(call);
            }
            cancel.get(CLOSE_SECONDS, TimeUnit.SECONDS);
            if (started) {
                listener.awaitClose(CLOSE_SECONDS, TimeUnit.SECONDS);
                listener.assertContract();
            }
        }
        assertThat(thrownByCancel).as("exceptions thrown out of cancel()").isEmpty();
        assertTerminatesGracefully(channel);
    }

    /**
     * Hedges sent at once, the first answer wins: the engine cancels the losers while other threads may
     * still be starting them, and the application cancels some calls meanwhile.
     */
    @Test
    void losersCancelledWhileStartingLeaveNoStreamThatBlocksShutdown() throws Exception {
        harness.server.script(a -> Action.ok());
        ManagedChannel channel = channel(
                Configs.channel(Configs.hedged(Configs.hedging(5, 0, Status.Code.UNAVAILABLE))));
        for (int i = 0; i < CALLS; i++) {
            ClientCall<SimpleRequest, SimpleResponse> call = channel.newCall(Rpc.UNARY, CallOptions.DEFAULT);
            ContractListener<SimpleResponse> listener = new ContractListener<>();
            call.start(listener, new Metadata());
            Future<?> cancel = null;
            if (i % 2 == 0) {
                CyclicBarrier barrier = new CyclicBarrier(2);
                cancel = cancelSoon(() -> call.cancel("cancelled by the application", null), barrier);
                await(barrier);
            }
            sendRequest(call);
            if (cancel != null) {
                cancel.get(CLOSE_SECONDS, TimeUnit.SECONDS);
            }
            Status s = listener.awaitClose(CLOSE_SECONDS, TimeUnit.SECONDS);
            listener.assertContract();
            assertThat(s.getCode()).isIn(Status.Code.OK, Status.Code.CANCELLED);
        }
        assertThat(thrownByCancel).as("exceptions thrown out of cancel()").isEmpty();
        assertTerminatesGracefully(channel);
    }

    /**
     * An application that cancels through the stub's {@link ClientCallStreamObserver} from another
     * thread, handed over in {@code beforeStart}, so the cancel runs while the stub starts the call:
     * no exception out of {@code cancel()}, exactly one end for every call that started.
     */
    @Test
    void stubCancelDuringStartThrowsNothingAndEndsTheCallOnce() throws Exception {
        harness.server.script(a -> a.index % 2 == 0 ? Action.ok() : Action.fail(Status.Code.UNAVAILABLE));
        ManagedChannel channel = channel(Configs.channel(Configs.policy(5, 1, 2, 1, Status.Code.UNAVAILABLE)));
        for (int i = 0; i < CALLS; i++) {
            AtomicInteger ends = new AtomicInteger();
            CountDownLatch ended = new CountDownLatch(1);
            CyclicBarrier barrier = new CyclicBarrier(2);
            List<Future<?>> cancel = new CopyOnWriteArrayList<>();
            ClientResponseObserver<SimpleRequest, SimpleResponse> observer = new ClientResponseObserver<>() {
                @Override
                public void beforeStart(ClientCallStreamObserver<SimpleRequest> requestStream) {
                    cancel.add(cancelSoon(() -> requestStream.cancel("cancelled by the application", null), barrier));
                    await(barrier); // the cancel is under way when the stub starts the call
                }

                @Override
                public void onNext(SimpleResponse value) {
                }

                @Override
                public void onError(Throwable t) {
                    ends.incrementAndGet();
                    ended.countDown();
                }

                @Override
                public void onCompleted() {
                    ends.incrementAndGet();
                    ended.countDown();
                }
            };
            boolean started = true;
            try {
                ClientCalls.asyncUnaryCall(channel.newCall(Rpc.UNARY, CallOptions.DEFAULT), Rpc.request("q"), observer);
            } catch (IllegalStateException e) {
                // the cancel came before the start: the stub's call refuses to start, as grpc-java's own does
                assertThat(e).hasMessageContaining("cancel");
                started = false;
            }
            if (started) {
                assertThat(ended.await(CLOSE_SECONDS, TimeUnit.SECONDS)).as("call %d ended", i).isTrue();
            }
            assertThat(cancel).as("cancel of call %d", i).hasSize(1);
            cancel.get(0).get(CLOSE_SECONDS, TimeUnit.SECONDS);
            assertThat(ends.get()).as("ends of call %d", i).isLessThanOrEqualTo(1);
        }
        assertThat(thrownByCancel).as("exceptions thrown out of cancel()").isEmpty();
        assertTerminatesGracefully(channel);
    }
}
