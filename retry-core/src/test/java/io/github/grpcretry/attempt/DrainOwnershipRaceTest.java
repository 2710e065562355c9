package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.ChannelRetryConfig;
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
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The ownership of an attempt's drain (docs/design.md §18, "Record and drain") under the interleavings a thread that owns it
 * meets while it is inside the attempt's call: another thread's request, the application's cancel, a hedge's commit,
 * the attempt's own commit (by its headers, or by the buffer limit inside the owner's own send), its failure, the
 * end of the call. Each interleaving is forced, not hoped for: an interceptor below the engine (it sees every
 * attempt's own call) holds one operation of attempt 1 on a latch (the application's thread, the owner of the drain,
 * is then inside it), the test does the other thing on its own thread and waits for its effect, then lets the held
 * operation go on; the assertions are what the application and the server saw. Every wait is a latch, a queue or a
 * monitor bounded by {@link #WAIT_SECONDS}, as a failure bound only, but the pass-through's: a state with no event
 * of its own, polled ({@link RetryEngineTest#waitFor}). The engine's timers fire only when a test fires them.
 *
 * <p>These guard a drain whose owner gives it up without the call's lock when nothing happened meanwhile: whatever
 * another thread logged, marked or committed while the owner was inside the attempt's call must still reach that
 * attempt (demand, cancel) or let the call pass through to it, once the owner is out. A demand or a cancel left in the
 * log with nobody to send it shows as a close that never comes, or an attempt the server never sees cancelled. No
 * application operation follows the race before the check that would otherwise send what was left behind.
 *
 * <p>Interceptor engine only: grpc-java's own retry has no per-attempt call an interceptor can hold (its interceptors
 * sit above its retry), so it cannot be forced into these interleavings. In-process transport: the races are in the
 * engine, and the in-process server records at once what reached it.
 */
class DrainOwnershipRaceTest extends DrainRaceRig {

    static Stream<Arguments> kindsAndHeldOperations() {
        List<Arguments> all = new ArrayList<>();
        for (Kind k : Kind.values()) {
            for (Held h : Held.values()) {
                all.add(Arguments.of(k, h));
            }
        }
        return all.stream();
    }

    /**
     * While the application's thread owns attempt 1's drain and is inside its {@code sendMessage}, {@code request}
     * or {@code halfClose}, another thread asks for messages (ClientCall lets {@code request} come from any thread): once
     * both returned, attempt 1's own call has been asked for exactly what the application asked for (nothing lost,
     * nothing twice), before any further operation of the application; the server's answers all reach the
     * application, which closes OK.
     */
    @ParameterizedTest(name = "{0}, owner inside {1}")
    @MethodSource("kindsAndHeldOperations")
    void demandAskedOnAnotherThreadWhileTheOwnerIsInsideTheAttemptReachesIt(Kind kind, Held held) throws Exception {
        start(kind, 60_000);
        Application app = new Application(Rpc.SERVER_STREAMING);
        Arrival first = arrival(1);
        int ownerDemand = held == Held.REQUEST ? 1 : 0;
        int otherDemand = 2;

        Thread owner = holdWhile(app, held);
        app.call.request(otherDemand); // this thread, while the owner is inside attempt 1's call
        release(owner);

        int asked = ownerDemand + otherDemand;
        assertThat(demand(1).await(asked)).as("attempt 1's call asked for the demand of both threads").isTrue();
        if (held == Held.SEND_MESSAGE || held == Held.REQUEST) {
            app.call.halfClose();
        }
        assertThat(first.halfClosed.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("attempt 1 half-closed").isTrue();
        first.call.sendHeaders(new Metadata());
        for (int i = 0; i < asked; i++) {
            first.call.sendMessage(response("r" + i));
        }
        first.call.close(Status.OK, new Metadata());

        assertThat(app.listener.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
        assertThat(app.heard()).as("the answers the application heard").hasSize(asked);
        assertThat(demand(1).total()).as("asked of attempt 1's call in all").isEqualTo(asked);
        assertThat(first.messages).containsExactly("m1");
        assertCleanEnd(app, 1);
    }

    /**
     * While the application's thread owns attempt 1's drain and is inside its {@code sendMessage}, {@code request}
     * or {@code halfClose}, the application cancels the call from another thread: attempt 1's own call is cancelled
     * (the server sees its cancellation; issued once, by nobody while the owner is inside the call but in its request),
     * the listener hears exactly one close, CANCELLED with the application's description, and the attempt is reported
     * ended.
     */
    @ParameterizedTest(name = "{0}, owner inside {1}")
    @MethodSource("kindsAndHeldOperations")
    void aCancelOnAnotherThreadWhileTheOwnerIsInsideTheAttemptCancelsItBelow(Kind kind, Held held) throws Exception {
        start(kind, 60_000);
        Application app = new Application(Rpc.SERVER_STREAMING);
        Arrival first = arrival(1);

        Thread owner = holdWhile(app, held);
        app.call.cancel("the application gives up", null); // this thread, while the owner is inside attempt 1's call
        release(owner);

        assertThat(first.cancelled.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the server saw attempt 1 cancelled")
                .isTrue();
        Status closed = app.listener.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(closed.getCode()).isEqualTo(Status.Code.CANCELLED);
        assertThat(closed.getDescription()).isEqualTo("the application gives up");
        assertThat(cancels(1).get()).as("cancels of attempt 1's call").isEqualTo(1);
        assertCleanEnd(app, 1);
    }

    /**
     * Hedging: the application's thread owns attempt 1's drain, the newest attempt then, and is inside its
     * {@code sendMessage}; meanwhile the hedge's timer fires, the hedge catches up with the log (the held message
     * included) and commits on its headers, which the application hears. Once the owner is out, attempt 1 is cancelled
     * (the server sees it), the call passes through to the hedge: the application's later messages reach the hedge's
     * stream (none reaches attempt 1), and the call ends OK with the hedge's answer.
     */
    @Test
    void aHedgeThatCommitsWhileTheOwnerOfTheNewestAttemptIsInsideItsSendCancelsThatAttempt() throws Exception {
        start(Kind.HEDGE, 60_000);
        Application app = new Application(Rpc.BIDI);
        app.call.request(1);
        Arrival first = arrival(1);

        Thread owner = holdWhile(app, Held.SEND_MESSAGE);
        assertThat(timers.fireNext()).as("the hedge's timer was set").isTrue();
        Arrival hedge = arrival(2);
        assertThat(hedge.next()).as("the held message replayed to the hedge").isEqualTo("m1");
        hedge.call.sendHeaders(new Metadata()); // the hedge commits while attempt 1's owner is inside its send
        assertThat(app.headers.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the application heard the hedge's headers")
                .isTrue();
        release(owner);

        assertHedgeWinsAndPassesThrough(app, first, hedge);
    }

    /**
     * Hedging with no delay: both attempts start with the call; the application's message goes to attempt 1 first,
     * by the application's thread owning attempt 1's drain (the hedge, the newest, is its next), held inside attempt 1's
     * {@code sendMessage}. The hedge commits on its headers meanwhile: once the owner is out, attempt 1 is cancelled,
     * the message reaches the hedge, the call passes through to it, later messages reach the hedge only and the call
     * ends OK with the hedge's answer.
     */
    @Test
    void aHedgeThatCommitsWhileTheOwnerIsInsideTheOlderAttemptsSendCancelsThatAttempt() throws Exception {
        start(Kind.HEDGE, 0);
        Application app = new Application(Rpc.BIDI);
        app.call.request(1);
        Arrival first = arrival(1);
        Arrival hedge = arrival(2);

        Thread owner = holdWhile(app, Held.SEND_MESSAGE);
        hedge.call.sendHeaders(new Metadata()); // the hedge commits while attempt 1's owner is inside its send
        assertThat(app.headers.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the application heard the hedge's headers")
                .isTrue();
        release(owner);

        assertThat(hedge.next()).as("the held message reached the hedge").isEqualTo("m1");
        assertHedgeWinsAndPassesThrough(app, first, hedge);
    }

    /**
     * A retry policy: the application's thread owns attempt 1's drain and is inside its {@code halfClose}; meanwhile
     * attempt 1's own headers arrive on another thread and commit it (the application hears them). Once the owner is
     * out, the call passes through to attempt 1 (its log released: the channel's buffer holds none of its bytes); the
     * application's later request (none asked before) reaches attempt 1's call, the server stream's answers reach the
     * application and the call ends OK.
     */
    @Test
    void anAttemptCommittedByItsHeadersWhileItsOwnerIsInsideHalfCloseGetsTheLaterDemand() throws Exception {
        start(Kind.RETRY, 0);
        Application app = new Application(Rpc.BIDI); // a stream whose message is flushed before its half-close
        Arrival first = arrival(1);
        app.call.sendMessage(Rpc.request("m1"));
        assertThat(first.next()).isEqualTo("m1");

        Thread owner = holdWhile(app, Held.HALF_CLOSE, false);
        first.call.sendHeaders(new Metadata()); // attempt 1 commits while its owner is inside its halfClose
        assertThat(app.headers.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the application heard attempt 1's headers")
                .isTrue();
        release(owner);
        assertThat(first.halfClosed.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("attempt 1 half-closed").isTrue();
        RetryEngineTest.waitFor(() -> ((EngineCall<?, ?>) app.call).state().passThrough()); // polls, see waitFor
        assertThat(EngineTestAccess.bufferPool(engine).used()).as("bytes the channel's buffer holds for the call")
                .isZero();

        app.call.request(2);
        assertThat(demand(1).await(2)).as("the later request reached attempt 1's call").isTrue();
        first.call.sendMessage(response("a"));
        first.call.sendMessage(response("b"));
        first.call.close(Status.OK, new Metadata());

        assertThat(app.listener.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
        assertThat(app.heard()).containsExactly("a", "b");
        assertThat(demand(1).total()).as("asked of attempt 1's call in all").isEqualTo(2);
        assertCleanEnd(app, 1);
    }

    /**
     * A retry policy: the application's thread owns attempt 1's drain and is inside its {@code sendMessage} when the
     * server fails attempt 1 with a status the policy retries. Once the owner is out and the retry's timer fires, the
     * retry replays the log, the held message included (once), and the call ends OK with the retry's answer.
     */
    @Test
    void anAttemptThatFailsWhileItsOwnerIsInsideItsSendIsRetriedWithTheHeldMessage() throws Exception {
        start(Kind.RETRY, 0);
        Application app = new Application(Rpc.SERVER_STREAMING);
        app.call.request(1);
        Arrival first = arrival(1);

        Thread owner = holdWhile(app, Held.SEND_MESSAGE);
        first.call.close(Status.UNAVAILABLE.withDescription("attempt 1 fails"), new Metadata());
        assertThat(closed(1).await(WAIT_SECONDS, TimeUnit.SECONDS)).as("attempt 1 closed, its retry scheduled").isTrue();
        release(owner);
        assertThat(timers.fireNext()).as("the retry's timer was set").isTrue();
        Arrival retry = arrival(2);
        app.call.halfClose();

        assertThat(retry.halfClosed.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the retry half-closed").isTrue();
        assertThat(retry.messages).as("the retry's messages").containsExactly("m1");
        retry.call.sendHeaders(new Metadata());
        retry.call.sendMessage(response("answer"));
        retry.call.close(Status.OK, new Metadata());
        assertThat(app.listener.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
        assertThat(app.heard()).containsExactly("answer");
        assertThat(demand(2).total()).as("asked of the retry's call").isEqualTo(1);
        assertThat(cancels(1).get()).as("attempt 1, closed by the server, is not cancelled").isZero();
        assertCleanEnd(app, 2);
    }

    /**
     * The call ends while the application's thread owns attempt 1's drain and is inside its {@code sendMessage},
     * {@code request} or {@code halfClose}: the server answers attempt 1 (headers, OK) meanwhile. The application
     * hears one close, OK; attempt 1, closed by the server, is not cancelled; the owner returns normally and a later
     * half-close does nothing.
     */
    @ParameterizedTest(name = "{0}, owner inside {1}")
    @MethodSource("kindsAndHeldOperations")
    void theCallEndingWhileTheOwnerIsInsideTheAttemptClosesItOnce(Kind kind, Held held) throws Exception {
        start(kind, 60_000);
        Application app = new Application(Rpc.SERVER_STREAMING);
        Arrival first = arrival(1);

        Thread owner = holdWhile(app, held);
        first.call.sendHeaders(new Metadata());
        first.call.close(Status.OK, new Metadata()); // the call ends while the owner is inside attempt 1's call
        assertThat(closed(1).await(WAIT_SECONDS, TimeUnit.SECONDS)).as("attempt 1's own call closed").isTrue();
        release(owner);
        if (held != Held.HALF_CLOSE) {
            app.call.halfClose();
        }

        assertThat(app.listener.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
        assertThat(cancels(1).get()).as("attempt 1, closed by the server, is not cancelled").isZero();
        assertCleanEnd(app, 1);
    }

    /**
     * A retry policy with a 1 KiB per-call buffer: the application's second message takes the call past it inside
     * the application's own send (the transport reports the bytes it wrote on the sending thread, the owner of
     * attempt 1's drain), which commits attempt 1 there, with no other attempt to cancel. Once the send returned, the
     * call passes through and its log is released (the channel's buffer holds none of the bytes it held before); a
     * later message and request reach attempt 1 and the call ends OK.
     */
    @Test
    void anAttemptCommittedByTheBufferLimitInsideItsOwnersSendPassesThroughAndReleasesTheLog() throws Exception {
        start(Configs.channel(Configs.service(Configs.policy(3, 10, 10, 1, Status.Code.UNAVAILABLE), null), 1024,
                1 << 20, null));
        Application app = new Application(Rpc.BIDI);
        Arrival first = arrival(1);
        app.call.sendMessage(Rpc.request("s".repeat(600)));
        assertThat(first.next()).hasSize(600);
        assertThat(EngineTestAccess.bufferPool(engine).used()).as("the first message's bytes held (in-process counts"
                + " them with GRPC_EXPERIMENTAL_SUPPORT_TRACING_MESSAGE_SIZES=true, which retry-core's tests set)")
                .isPositive();

        app.call.sendMessage(Rpc.request("b".repeat(600))); // past 1 KiB: committed inside this send
        assertThat(first.next()).hasSize(600);
        assertThat(events.events).as("attempt 1 committed by the buffer limit")
                .anyMatch(e -> e.type().equals("committed") && e.attempt() == 1);
        RetryEngineTest.waitFor(() -> ((EngineCall<?, ?>) app.call).state().passThrough()); // polls, see waitFor
        assertThat(EngineTestAccess.bufferPool(engine).used()).as("bytes the channel's buffer holds for the call")
                .isZero();

        app.call.request(1);
        app.call.sendMessage(Rpc.request("m3"));
        assertThat(first.next()).isEqualTo("m3");
        app.call.halfClose();
        assertThat(first.halfClosed.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("attempt 1 half-closed").isTrue();
        first.call.sendHeaders(new Metadata());
        first.call.sendMessage(response("answer"));
        first.call.close(Status.OK, new Metadata());
        assertThat(app.listener.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
        assertThat(app.heard()).containsExactly("answer");
        assertThat(demand(1).total()).as("asked of attempt 1's call in all").isEqualTo(1);
        assertCleanEnd(app, 1);
    }

    /** After the hedge committed and the owner of attempt 1's drain is out. */
    private void assertHedgeWinsAndPassesThrough(Application app, Arrival first, Arrival hedge) throws Exception {
        assertThat(first.cancelled.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the server saw attempt 1 cancelled")
                .isTrue();
        assertThat(cancels(1).get()).as("cancels of attempt 1's call").isEqualTo(1);
        RetryEngineTest.waitFor(() -> ((EngineCall<?, ?>) app.call).state().passThrough()); // polls, see waitFor
        app.call.sendMessage(Rpc.request("m2"));
        assertThat(hedge.next()).as("a message sent after the commit reached the hedge").isEqualTo("m2");
        app.call.sendMessage(Rpc.request("m3"));
        assertThat(hedge.next()).isEqualTo("m3");
        app.call.halfClose();
        assertThat(hedge.halfClosed.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the hedge half-closed").isTrue();
        hedge.call.sendMessage(response("answer"));
        hedge.call.close(Status.OK, new Metadata());

        assertThat(app.listener.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
        assertThat(app.heard()).containsExactly("answer");
        assertThat(first.messages).as("attempt 1 got nothing sent after the commit").doesNotContain("m2", "m3");
        assertThat(cancels(2).get()).as("the hedge, committed, is not cancelled").isZero();
        assertCleanEnd(app, 2);
    }
}
