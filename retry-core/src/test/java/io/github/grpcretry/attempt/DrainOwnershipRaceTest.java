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
class DrainOwnershipRaceTest {

    private static final long WAIT_SECONDS = 10;

    /** The call's policy. */
    enum Kind {
        /** A retry policy (UNAVAILABLE is retried; in the tests that take a kind no attempt fails). */
        RETRY,
        /** Hedging whose next hedge's timer the test never fires: attempt 1 alone, through {@link HedgingCall}. */
        HEDGE
    }

    /** The operation of attempt 1 the application's thread is held in, below the engine. */
    enum Held {
        SEND_MESSAGE, REQUEST, HALF_CLOSE
    }

    private final Map<Integer, CompletableFuture<Arrival>> arrivals = new ConcurrentHashMap<>();
    private final Map<Integer, Demand> demandBelow = new ConcurrentHashMap<>();
    private final Map<Integer, CountDownLatch> closedBelow = new ConcurrentHashMap<>();
    private final Map<Integer, AtomicInteger> cancelsBelow = new ConcurrentHashMap<>();
    /** Two threads inside one attempt's call at once, other than in {@code request} (ClientCall lets that be). */
    private final List<String> overlaps = new CopyOnWriteArrayList<>();
    /** What went wrong on a thread the test does not run (a held operation never let go). */
    private final List<String> problems = new CopyOnWriteArrayList<>();
    private final RecordingEvents events = new RecordingEvents();
    private volatile Hold hold;
    private ExecutorService serverExecutor;
    private ExecutorService work;
    private ManualTimers timers;
    private RetryScheduler scheduler;
    private RetryingClientInterceptor engine;
    private Server server;
    private ManagedChannel channel;

    @AfterEach
    void tearDown() throws Exception {
        Hold h = hold;
        if (h != null) {
            h.release.countDown(); // a failed test lets its held thread go
        }
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (scheduler != null) {
            scheduler.close();
        }
        if (timers != null) {
            timers.shutdownNow();
        }
        if (work != null) {
            work.shutdownNow();
        }
        if (serverExecutor != null) {
            serverExecutor.shutdownNow();
        }
    }

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

    /** One close, the call's contract kept, every attempt closed below and reported ended, no thread overlap. */
    private void assertCleanEnd(Application app, int attempts) throws InterruptedException {
        for (int n = 1; n <= attempts; n++) {
            assertThat(closed(n).await(WAIT_SECONDS, TimeUnit.SECONDS)).as("attempt %d's own call closed", n).isTrue();
        }
        assertThat(events.attemptsStarted.get()).as("attempts started").isEqualTo(attempts);
        assertThat(events.attemptsEnded.get()).as("attempts reported ended (before their close below)")
                .isEqualTo(attempts);
        assertThat(app.listener.closeCount()).as("closes the application heard").isEqualTo(1);
        app.listener.assertContract();
        assertThat(overlaps).as("threads inside one attempt's call at once (request aside)").isEmpty();
        assertThat(problems).isEmpty();
        assertThat(EngineTestAccess.outstandingTimers(scheduler)).as("timers left").isZero();
    }

    /**
     * The application's thread does {@code held} (after what it needs first: the message, unless held inside its send)
     * and is held below the engine inside attempt 1's call; returns once it is.
     */
    private Thread holdWhile(Application app, Held held) throws InterruptedException {
        return holdWhile(app, held, held != Held.SEND_MESSAGE);
    }

    private Thread holdWhile(Application app, Held held, boolean sendFirst) throws InterruptedException {
        if (sendFirst) {
            app.call.sendMessage(Rpc.request("m1"));
        }
        Hold h = new Hold(1, held);
        hold = h;
        Thread owner = new Thread(() -> {
            switch (held) {
                case SEND_MESSAGE -> app.call.sendMessage(Rpc.request("m1"));
                case REQUEST -> app.call.request(1);
                case HALF_CLOSE -> app.call.halfClose();
            }
        }, "application-owner");
        owner.setUncaughtExceptionHandler((t, e) -> problems.add("the owner threw " + e));
        owner.start();
        assertThat(h.entered.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the owner held inside attempt 1's %s", held)
                .isTrue();
        assertThat(((EngineCall<?, ?>) app.call).state().passThrough()).as("not passing through yet").isFalse();
        return owner;
    }

    /** Lets the held operation go on and waits for the owner's thread to return from the application's call. */
    private void release(Thread owner) throws InterruptedException {
        hold.release.countDown();
        owner.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        assertThat(owner.isAlive()).as("the owner returned").isFalse();
    }

    private Arrival arrival(int attempt) throws Exception {
        return arrivals.computeIfAbsent(attempt, k -> new CompletableFuture<>()).get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    private Demand demand(int attempt) {
        return demandBelow.computeIfAbsent(attempt, k -> new Demand());
    }

    private CountDownLatch closed(int attempt) {
        return closedBelow.computeIfAbsent(attempt, k -> new CountDownLatch(1));
    }

    private AtomicInteger cancels(int attempt) {
        return cancelsBelow.computeIfAbsent(attempt, k -> new AtomicInteger());
    }

    /** The number of the attempt whose headers these are (the engine's count of the attempts before it). */
    private static int attemptNumber(Metadata headers) {
        String previous = headers.get(RetryingCall.PREVIOUS_ATTEMPTS);
        return previous == null ? 1 : Integer.parseInt(previous) + 1;
    }

    private static SimpleResponse response(String m) {
        return SimpleResponse.newBuilder().setResponseMessage(m).build();
    }

    /** The engine over {@link Below} on an in-process server with an executor of its own; timers fired by the test. */
    private void start(Kind kind, long hedgingDelayMillis) throws Exception {
        start(kind == Kind.RETRY ? Configs.channel(Configs.policy(3, 10, 10, 1, Status.Code.UNAVAILABLE))
                : Configs.channel(Configs.hedged(Configs.hedging(2, hedgingDelayMillis, Status.Code.UNAVAILABLE))));
    }

    private void start(ChannelRetryConfig config) throws Exception {
        String name = "drain-ownership-" + System.nanoTime();
        serverExecutor = Executors.newCachedThreadPool();
        server = InProcessServerBuilder.forName(name).executor(serverExecutor).addService(service()).build().start();
        timers = new ManualTimers();
        work = Executors.newCachedThreadPool();
        scheduler = RetryScheduler.of(timers, work);
        engine = RetryingClientInterceptor.builder(config)
                .eventListener(events)
                .scheduler(scheduler)
                .build();
        channel = InProcessChannelBuilder.forName(name)
                .intercept(new Below()) // below the engine: sees every attempt's own call
                .intercept(engine)
                .build();
    }

    /** Records every arrival by its attempt number; reads all its messages; the test answers it. */
    private ServerServiceDefinition service() {
        ServerCallHandler<SimpleRequest, SimpleResponse> handler = (call, headers) -> {
            Arrival a = new Arrival(call);
            call.request(100); // no call of the server's from its callbacks: only the test's thread answers
            arrivals.computeIfAbsent(attemptNumber(headers), k -> new CompletableFuture<>()).complete(a);
            return new ServerCall.Listener<>() {
                @Override
                public void onMessage(SimpleRequest message) {
                    a.messages.add(message.getRequestMessage());
                    a.queue.add(message.getRequestMessage());
                }

                @Override
                public void onHalfClose() {
                    a.halfClosed.countDown();
                }

                @Override
                public void onCancel() {
                    a.cancelled.countDown();
                }
            };
        };
        return ServerServiceDefinition.builder(Configs.SERVICE).addMethod(Rpc.SERVER_STREAMING, handler)
                .addMethod(Rpc.BIDI, handler).build();
    }

    /** One attempt as the server saw it. */
    private static final class Arrival {
        final ServerCall<SimpleRequest, SimpleResponse> call;
        final List<String> messages = new CopyOnWriteArrayList<>();
        final BlockingQueue<String> queue = new LinkedBlockingQueue<>();
        final CountDownLatch halfClosed = new CountDownLatch(1);
        final CountDownLatch cancelled = new CountDownLatch(1);

        Arrival(ServerCall<SimpleRequest, SimpleResponse> call) {
            this.call = call;
        }

        /** Its next message (null: none came in time). */
        String next() throws InterruptedException {
            return queue.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        }
    }

    /** The application's call: started, nothing asked for yet; a latch on its headers. */
    private final class Application {
        final CountDownLatch headers = new CountDownLatch(1);
        final ClientCall<SimpleRequest, SimpleResponse> call;
        final ContractListener<SimpleResponse> listener;

        Application(MethodDescriptor<SimpleRequest, SimpleResponse> method) {
            call = channel.newCall(method, CallOptions.DEFAULT);
            listener = new ContractListener<>(new ClientCall.Listener<>() {
                @Override
                public void onHeaders(Metadata h) {
                    headers.countDown();
                }
            });
            call.start(listener, new Metadata());
        }

        List<String> heard() {
            List<String> r = new ArrayList<>();
            for (SimpleResponse m : listener.messages()) {
                r.add(m.getResponseMessage());
            }
            return r;
        }
    }

    /** The demand one attempt's own call was asked for below the engine. */
    private static final class Demand {
        private long total;

        synchronized void add(int n) {
            total += n;
            notifyAll();
        }

        synchronized long total() {
            return total;
        }

        /** Whether it reaches {@code n} in time. */
        synchronized boolean await(long n) throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            for (long left = end - System.nanoTime(); total < n && left > 0; left = end - System.nanoTime()) {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return total >= n;
        }
    }

    /** Which operation of which attempt is held, once: entered when a thread is inside it, let go by release. */
    private static final class Hold {
        final int attempt;
        final Held op;
        final AtomicBoolean taken = new AtomicBoolean();
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        Hold(int attempt, Held op) {
            this.attempt = attempt;
            this.op = op;
        }
    }

    /**
     * Below the engine, on every attempt's own call: holds the operation {@link #hold} names; counts demand, cancels,
     * closes (after the engine heard them) and any two threads inside the call at once other than in {@code request}.
     */
    private final class Below implements ClientInterceptor {
        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                CallOptions callOptions, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
                private final AtomicInteger inside = new AtomicInteger();
                private volatile int attempt;

                @Override
                public void start(Listener<RespT> listener, Metadata headers) {
                    attempt = attemptNumber(headers);
                    CountDownLatch closed = closed(attempt);
                    enter("start");
                    try {
                        super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                            @Override
                            public void onClose(Status status, Metadata trailers) {
                                super.onClose(status, trailers); // the engine heard it before the latch
                                closed.countDown();
                            }
                        }, headers);
                    } finally {
                        leave();
                    }
                }

                @Override
                public void sendMessage(ReqT message) {
                    enter("sendMessage");
                    try {
                        holdIf(Held.SEND_MESSAGE);
                        super.sendMessage(message);
                    } finally {
                        leave();
                    }
                }

                @Override
                public void halfClose() {
                    enter("halfClose");
                    try {
                        holdIf(Held.HALF_CLOSE);
                        super.halfClose();
                    } finally {
                        leave();
                    }
                }

                @Override
                public void request(int numMessages) {
                    holdIf(Held.REQUEST);
                    demand(attempt).add(numMessages);
                    super.request(numMessages);
                }

                @Override
                public void cancel(String message, Throwable cause) {
                    enter("cancel");
                    try {
                        cancels(attempt).incrementAndGet();
                        super.cancel(message, cause);
                    } finally {
                        leave();
                    }
                }

                private void holdIf(Held op) {
                    Hold h = hold;
                    if (h == null || h.attempt != attempt || h.op != op || !h.taken.compareAndSet(false, true)) {
                        return;
                    }
                    h.entered.countDown();
                    try {
                        if (!h.release.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
                            problems.add("attempt " + attempt + "'s " + op + " was held past the bound");
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        problems.add("interrupted while held in " + op);
                    }
                }

                private void enter(String what) {
                    if (inside.incrementAndGet() > 1) {
                        overlaps.add(what + " of attempt " + attempt + " on " + Thread.currentThread().getName());
                    }
                }

                private void leave() {
                    inside.decrementAndGet();
                }
            };
        }
    }

    /** Timers the test fires: a scheduled task runs when {@link #fireNext} says, never on its own. */
    private static final class ManualTimers extends ScheduledThreadPoolExecutor {
        private final BlockingQueue<Runnable> scheduled = new LinkedBlockingQueue<>();

        ManualTimers() {
            super(1, r -> {
                Thread t = new Thread(r, "drain-ownership-timer");
                t.setDaemon(true);
                return t;
            });
            setRemoveOnCancelPolicy(true);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            scheduled.add(command);
            return super.schedule(() -> { }, 1, TimeUnit.DAYS); // cancelled with the engine's timer; never runs
        }

        /** Runs the oldest timer scheduled (the engine hands its task to its work executor); false: none. */
        boolean fireNext() {
            Runnable r = scheduled.poll();
            if (r != null) {
                r.run();
            }
            return r != null;
        }
    }
}
