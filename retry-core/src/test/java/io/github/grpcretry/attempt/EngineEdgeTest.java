package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The call contract at the engine's edges (docs/design.md §18), each as an application sees it through
 * the raw {@code ClientCall} API on the in-process transport: {@code onReady} whenever the call becomes
 * ready (before and after commit, after a replay); nothing but the close after the application cancels;
 * an exception from the application's listener cancels the whole call; a closed scheduler ends a
 * waiting call. Every call is checked to close exactly once and to keep the callback contract.
 */
class EngineEdgeTest {

    private static final long WAIT_SECONDS = 20;
    private EdgeRig rig;

    @AfterEach
    void tearDown() throws InterruptedException {
        if (rig != null) {
            rig.close();
            assertThat(EngineTestAccess.outstandingTimers(rig.scheduler)).as("timers outstanding").isZero();
            assertThat(EngineTestAccess.bufferPool(rig.engine).used()).as("bytes held").isZero();
        }
    }

    private static ChannelRetryConfig retry(long initialBackoffMs) {
        return Configs.channel(Configs.policy(3, initialBackoffMs, initialBackoffMs, 1, Status.Code.UNAVAILABLE));
    }

    private static ChannelRetryConfig hedging(int attempts, long delayMs) {
        return Configs.channel(Configs.hedged(Configs.hedging(attempts, delayMs, Status.Code.UNAVAILABLE)));
    }

    private static CallOptions deadline() {
        return CallOptions.DEFAULT.withDeadlineAfter(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    // ------------------------------------------------------------------ onReady

    /**
     * The in-process transport is ready to send only while the server has asked for a message, and the
     * server here asks for one at a time: every message waits for an {@code onReady}. With direct
     * executors the first {@code onReady} comes while the attempt is being started.
     */
    private ReadyWriter writeDrivenByOnReady(EdgeRig r, int total) throws InterruptedException {
        ReadyWriter w = new ReadyWriter(r.call(Rpc.CLIENT_STREAMING, deadline()), total, 16).start();
        Status s = w.listener.awaitClose(WAIT_SECONDS + 5, TimeUnit.SECONDS);
        w.listener.assertContract();
        assertThat(s.getCode()).as("%s; wrote %d, heard %d onReady", s, w.written.get(), w.readies.get())
                .isEqualTo(Status.Code.OK);
        assertThat(w.listener.messages()).extracting(SimpleResponse::getResponseMessage)
                .containsExactly(String.valueOf(total));
        return w;
    }

    @Test
    void onReadyDrivenWritesFinishWhileUncommitted() throws Exception {
        rig = new EdgeRig(retry(10), true);
        writeDrivenByOnReady(rig, 50);
        assertThat(rig.arrivals).hasSize(1);
    }

    @Test
    void onReadyDrivenWritesFinishAfterCommit() throws Exception {
        rig = new EdgeRig(retry(10), true).script(i -> new EdgeRig.Behaviour() {
            @Override
            public void started(EdgeRig.Arrival a) {
                a.call.sendHeaders(new Metadata()); // commits the call before any message is written
                a.call.request(1);
            }

            @Override
            public void halfClosed(EdgeRig.Arrival a) {
                a.call.sendMessage(SimpleResponse.newBuilder().setResponseMessage(
                        String.valueOf(a.messages.size())).build());
                a.call.close(Status.OK, new Metadata());
            }
        });
        writeDrivenByOnReady(rig, 50);
    }

    @Test
    void onReadyDrivenWritesFinishAfterAReplay() throws Exception {
        rig = new EdgeRig(retry(10), true).script(i -> i > 0 ? EdgeRig.COUNT : new EdgeRig.Behaviour() {
            @Override
            public void message(EdgeRig.Arrival a, SimpleRequest m) {
                if (a.messages.size() == 10) {
                    a.fail(Status.UNAVAILABLE, new Metadata()); // the retry replays these ten
                } else {
                    a.call.request(1);
                }
            }
        });
        writeDrivenByOnReady(rig, 50);
        assertThat(rig.arrivals).hasSize(2);
        assertThat(rig.arrival(1).messages).hasSize(50);
    }

    /** The first attempt fails inside {@code start}, before the application's first look at readiness. */
    @Test
    void onReadyDrivenWritesFinishWhenTheFirstAttemptFailsAtOnce() throws Exception {
        rig = new EdgeRig(retry(10), true).script(i -> i == 0 ? UNAVAILABLE_AT_ONCE : EdgeRig.COUNT);
        writeDrivenByOnReady(rig, 5);
        assertThat(rig.arrivals).hasSize(2);
    }

    @Test
    void onReadyDrivenWritesFinishUnderHedging() throws Exception {
        rig = new EdgeRig(hedging(2, 60_000), true);
        writeDrivenByOnReady(rig, 50);
        assertThat(rig.arrivals).hasSize(1);
    }

    // ------------------------------------------------------------------ cancel

    /** A server-streaming application: demand one message, cancel on the first. */
    private static ContractListener<SimpleResponse> cancelOnFirstMessage(ClientCall<SimpleRequest, SimpleResponse> call) {
        ContractListener<SimpleResponse> l = new ContractListener<>(new ClientCall.Listener<>() {
            @Override
            public void onMessage(SimpleResponse message) {
                call.cancel("enough", null);
            }
        });
        call.start(l, new Metadata());
        call.sendMessage(Rpc.request("go"));
        call.halfClose();
        call.request(1); // last: no message (and so no cancel) comes before the half-close, which would then be refused
        return l;
    }

    private static void assertCancelledAfterOneMessage(ContractListener<SimpleResponse> l) throws InterruptedException {
        Status s = l.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS);
        l.assertContract();
        assertThat(l.messages()).as("messages after the cancel beyond those requested").hasSize(1);
        assertThat(s.getCode()).as(s.toString()).isEqualTo(Status.Code.CANCELLED);
    }

    /** Every message and the OK sent at once: the in-process transport holds them until requested. */
    private static EdgeRig.Behaviour sendAllAtOnce(int messages) {
        return new EdgeRig.Behaviour() {
            @Override
            public void started(EdgeRig.Arrival a) {
                a.respond(messages, Status.OK);
            }
        };
    }

    private static final EdgeRig.Behaviour UNAVAILABLE_AT_ONCE = new EdgeRig.Behaviour() {
        @Override
        public void started(EdgeRig.Arrival a) {
            a.fail(Status.UNAVAILABLE, new Metadata());
        }
    };

    @Test
    void cancelOnTheFirstMessageOfARetryGivesOneMessageThenCancelled() throws Exception {
        rig = new EdgeRig(retry(10), false).script(i -> i == 0 ? UNAVAILABLE_AT_ONCE : sendAllAtOnce(5));
        assertCancelledAfterOneMessage(cancelOnFirstMessage(rig.call(Rpc.SERVER_STREAMING, deadline())));
        assertThat(rig.arrivals).hasSize(2);
    }

    @Test
    void cancelWhileARetryReplaysClosesTheCallOnceCancelled() throws Exception {
        rig = new EdgeRig(retry(10), true).script(i -> i == 0 ? UNAVAILABLE_AT_ONCE : sendAllAtOnce(5));
        for (int n = 0; n < 20; n++) {
            assertCancelledAfterOneMessage(cancelOnFirstMessage(rig.call(Rpc.SERVER_STREAMING, CallOptions.DEFAULT)));
            rig.script(i -> i % 2 == 0 ? UNAVAILABLE_AT_ONCE : sendAllAtOnce(5));
        }
    }

    @Test
    void cancelOnFirstHedgedMessageGivesOneMessageThenCancelled() throws Exception {
        rig = new EdgeRig(hedging(2, 60_000), false).script(i -> sendAllAtOnce(5));
        assertCancelledAfterOneMessage(cancelOnFirstMessage(rig.call(Rpc.SERVER_STREAMING, deadline())));
    }

    // ------------------------------------------------------------------ the application's listener throws

    private static final class AppBug extends RuntimeException {
        AppBug(String where) {
            super("application bug in " + where);
        }
    }

    /** A listener that throws {@link AppBug} from the callback {@code where} names. */
    private static ContractListener<SimpleResponse> throwingFrom(String where) {
        return new ContractListener<>(new NamedCallbacks(callback -> {
            if (callback.equals(where)) {
                throw new AppBug(where);
            }
        }));
    }

    private static void assertCancelledBy(ContractListener<SimpleResponse> l, String where)
            throws InterruptedException {
        Status s = l.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS);
        l.assertContract();
        assertThat(s.getCode()).as(s.toString()).isEqualTo(Status.Code.CANCELLED);
        assertThat(s.getCause()).as(s.toString()).isInstanceOf(AppBug.class).hasMessageContaining(where);
    }

    /** Holds every arrival open after its headers (sent once {@code headersAt} arrivals are in). */
    private static EdgeRig.Behaviour headersThenHold(EdgeRig r, int headersAt) {
        return new EdgeRig.Behaviour() {
            @Override
            public void started(EdgeRig.Arrival a) {
                if (a.index + 1 == headersAt) {
                    a.call.sendHeaders(new Metadata());
                    a.call.sendMessage(SimpleResponse.newBuilder().setResponseMessage("r0").build());
                }
            }

            @Override
            public void halfClosed(EdgeRig.Arrival a) {
            }
        };
    }

    private void throwingListenerCancelsEveryAttempt(ChannelRetryConfig config, int attempts, String where)
            throws Exception {
        rig = new EdgeRig(config, false);
        rig.script(i -> headersThenHold(rig, attempts));
        ClientCall<SimpleRequest, SimpleResponse> call = rig.call(Rpc.SERVER_STREAMING, deadline());
        ContractListener<SimpleResponse> l = throwingFrom(where);
        call.start(l, new Metadata());
        call.request(1);
        call.sendMessage(Rpc.request("go"));
        call.halfClose();
        assertCancelledBy(l, where);
        assertThat(rig.arrivals).hasSize(attempts);
        for (EdgeRig.Arrival a : rig.arrivals) {
            assertThat(a.cancelled.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("attempt %d cancelled", a.index).isTrue();
        }
    }

    @Test
    void aThrowingOnHeadersCancelsTheRetriedCall() throws Exception {
        throwingListenerCancelsEveryAttempt(retry(10), 1, "onHeaders");
    }

    @Test
    void aThrowingOnMessageCancelsTheRetriedCall() throws Exception {
        throwingListenerCancelsEveryAttempt(retry(10), 1, "onMessage");
    }

    @Test
    void aThrowingOnHeadersCancelsEveryHedge() throws Exception {
        throwingListenerCancelsEveryAttempt(hedging(3, 0), 3, "onHeaders");
    }

    @Test
    void aThrowingOnMessageCancelsEveryHedge() throws Exception {
        throwingListenerCancelsEveryAttempt(hedging(3, 0), 3, "onMessage");
    }

    @Test
    void aThrowingOnReadyCancelsTheCall() throws Exception {
        rig = new EdgeRig(retry(10), false).script(i -> new EdgeRig.Behaviour() {
            @Override
            public void halfClosed(EdgeRig.Arrival a) {
            }
        });
        ClientCall<SimpleRequest, SimpleResponse> call = rig.call(Rpc.CLIENT_STREAMING, deadline());
        ContractListener<SimpleResponse> l = throwingFrom("onReady");
        call.start(l, new Metadata());
        assertCancelledBy(l, "onReady");
        assertThat(rig.arrival(0).cancelled.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    }

    /** Hedged calls all answered at once: whichever attempt's delivery is on the stack, the whole call is cancelled. */
    @Test
    void aThrowingOnMessageUnderHedgingNeverLetsTheWinnersOkThrough() throws Exception {
        rig = new EdgeRig(hedging(3, 0), false).script(i -> sendAllAtOnce(1));
        for (int n = 0; n < 25; n++) {
            ContractListener<SimpleResponse> l = throwingFrom("onMessage");
            ClientCall<SimpleRequest, SimpleResponse> call = rig.call(Rpc.SERVER_STREAMING, deadline());
            call.start(l, new Metadata());
            call.request(1);
            call.sendMessage(Rpc.request("go"));
            call.halfClose();
            assertCancelledBy(l, "onMessage");
        }
    }

    /**
     * The winner's headers arrive while a losing hedge's {@code onReady} is being delivered, so they are
     * delivered on the loser's thread, and the application's {@code onHeaders} throws there.
     */
    @Test
    void listenerThrowingAsLosingHedgeDeliversCancelsTheCall() throws Exception {
        rig = new EdgeRig(hedging(2, 0), false);
        CountDownLatch readyEntered = new CountDownLatch(1);
        CountDownLatch hedgeArrived = new CountDownLatch(1);
        rig.script(i -> new EdgeRig.Behaviour() {
            @Override
            public void started(EdgeRig.Arrival a) {
                if (a.index == 1) {
                    hedgeArrived.countDown();
                }
            }

            @Override
            public void message(EdgeRig.Arrival a, SimpleRequest m) {
            }

            @Override
            public void halfClosed(EdgeRig.Arrival a) {
            }
        });
        ContractListener<SimpleResponse> l = new ContractListener<>(new ClientCall.Listener<>() {
            @Override
            public void onReady() {
                if (readyEntered.getCount() > 0) {
                    readyEntered.countDown();
                    try {
                        rig.committed.await(WAIT_SECONDS, TimeUnit.SECONDS); // the winner's headers wait meanwhile
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }

            @Override
            public void onHeaders(Metadata headers) {
                throw new AppBug("onHeaders");
            }
        });
        ClientCall<SimpleRequest, SimpleResponse> call = rig.call(Rpc.CLIENT_STREAMING, deadline());
        call.start(l, new Metadata());
        call.request(1);
        assertThat(hedgeArrived.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
        rig.arrival(1).call.request(1); // only the hedge becomes ready, its onReady on a transport thread
        assertThat(readyEntered.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
        rig.arrival(0).respond(1, Status.OK); // the first attempt wins while the hedge's onReady runs
        assertCancelledBy(l, "onHeaders");
    }

    /** A close with nothing in flight (cancelled in backoff) runs on the call's executor: its exception stays there. */
    @Test
    void aThrowingOnCloseAfterACancelInBackoffIsSwallowed() throws Exception {
        Recording executor = new Recording();
        try {
            rig = new EdgeRig(retry(600_000), false).script(i -> UNAVAILABLE_AT_ONCE);
            ContractListener<SimpleResponse> l = throwingFrom("onClose");
            ClientCall<SimpleRequest, SimpleResponse> call = rig.call(Rpc.UNARY, CallOptions.DEFAULT.withExecutor(executor));
            call.start(l, new Metadata());
            send(call);
            assertThat(rig.retryScheduled.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            call.cancel("stop waiting", null);
            assertThat(l.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.CANCELLED);
            l.assertContract();
            executor.pool.shutdown();
            assertThat(executor.pool.awaitTermination(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            assertThat(executor.thrown).as("exceptions that escaped onClose").isEmpty();
        } finally {
            executor.pool.shutdownNow();
        }
    }

    /** An executor that records what a task threw into it (grpc-java logs such an exception and goes on). */
    private static final class Recording implements Executor {
        final ExecutorService pool = Executors.newCachedThreadPool();
        final ConcurrentLinkedQueue<Throwable> thrown = new ConcurrentLinkedQueue<>();

        @Override
        public void execute(Runnable task) {
            pool.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    thrown.add(e);
                }
            });
        }
    }

    @Test
    void aThrowingOnCloseIsSwallowedOnEveryPath() throws Exception {
        Recording executor = new Recording();
        try {
            for (ChannelRetryConfig config : List.of(retry(10), hedging(2, 0))) {
                rig = new EdgeRig(config, false).script(i -> i == 0 ? UNAVAILABLE_AT_ONCE : EdgeRig.COUNT);
                for (int n = 0; n < 5; n++) {
                    ContractListener<SimpleResponse> l = throwingFrom("onClose");
                    ClientCall<SimpleRequest, SimpleResponse> call = rig.call(Rpc.UNARY,
                            deadline().withExecutor(executor));
                    call.start(l, new Metadata());
                    call.request(1);
                    call.sendMessage(Rpc.request("go"));
                    call.halfClose();
                    assertThat(l.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
                    l.assertContract();
                }
                rig.close();
                assertThat(rig.events.callsEnded).hasValue(5);
            }
            executor.pool.shutdown();
            assertThat(executor.pool.awaitTermination(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            assertThat(executor.thrown).as("exceptions that escaped onClose").isEmpty();
        } finally {
            executor.pool.shutdownNow();
        }
    }

    // ------------------------------------------------------------------ the scheduler closes

    private static void assertShuttingDown(ContractListener<SimpleResponse> l) throws InterruptedException {
        Status s = l.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS);
        l.assertContract();
        assertThat(s.getCode()).as(s.toString()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(s.getDescription()).contains("shutting down");
    }

    private ContractListener<SimpleResponse> unary(Consumer<ClientCall<SimpleRequest, SimpleResponse>> afterStart) {
        ClientCall<SimpleRequest, SimpleResponse> call = rig.call(Rpc.UNARY, CallOptions.DEFAULT);
        ContractListener<SimpleResponse> l = new ContractListener<>();
        call.start(l, new Metadata());
        afterStart.accept(call);
        return l;
    }

    private static void send(ClientCall<SimpleRequest, SimpleResponse> call) {
        call.request(1);
        call.sendMessage(Rpc.request("go"));
        call.halfClose();
    }

    @Test
    void closingTheSchedulerEndsACallInBackoffAtOnce() throws Exception {
        rig = new EdgeRig(retry(600_000), false).script(i -> UNAVAILABLE_AT_ONCE);
        ContractListener<SimpleResponse> l = unary(EngineEdgeTest::send);
        assertThat(rig.retryScheduled.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
        rig.scheduler.close();
        assertShuttingDown(l);
        assertThat(rig.events.callsEnded).hasValue(1);
    }

    @Test
    void closingTheSchedulerEndsACallWaitingForAHedgeAtOnce() throws Exception {
        rig = new EdgeRig(hedging(3, 600_000), false);
        CountDownLatch failed = new CountDownLatch(1);
        rig.script(i -> new EdgeRig.Behaviour() {
            @Override
            public void started(EdgeRig.Arrival a) {
                Metadata t = new Metadata();
                t.put(ScriptedServer.PUSHBACK, "600000"); // the next hedge in ten minutes, nothing in flight
                a.fail(Status.UNAVAILABLE, t);
                failed.countDown();
            }
        });
        ContractListener<SimpleResponse> l = unary(EngineEdgeTest::send);
        assertThat(failed.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
        assertThat(rig.attemptEnds.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS)).as("the attempt's end").isTrue();
        rig.scheduler.close();
        assertShuttingDown(l);
    }

    @Test
    void callsAfterTheSchedulerClosedEndUnavailableWithoutThrowing() throws Exception {
        for (ChannelRetryConfig config : List.of(retry(10), hedging(2, 600_000))) {
            rig = new EdgeRig(config, false).script(i -> UNAVAILABLE_AT_ONCE);
            rig.scheduler.close();
            assertShuttingDown(unary(EngineEdgeTest::send));
            rig.close();
        }
    }
}
