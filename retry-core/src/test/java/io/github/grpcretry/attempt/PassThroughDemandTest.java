package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The application's demand while its call passes through to the committed attempt (docs/design.md §18, "The
 * pass-through") is counted in that attempt's sent demand, so that the attempt's cancel asks only for the messages
 * missing up to {@code Integer.MAX_VALUE}. grpc-java 1.85's in-process transport adds demands in an {@code int}
 * without saturating: counted short, the cancel's demand wraps it negative, an answer that lands between that demand
 * and the cancel stays queued, its close behind it, the cancel finds the stream closed, and the committed attempt's
 * {@code onClose} never runs (no {@code attemptEnded}, an interceptor below the engine never closed).
 *
 * <p>Both ways a call passes through: straight through (a retry policy: the committed attempt is the newest) and
 * through the call's state (hedging: the hedge sent after it is the newest). The interleaving is forced: an
 * interceptor below the engine has the server answer the committed attempt when the engine cancels it, before the
 * cancel goes on. The same interceptor makes the committed attempt's request throw for the second test, and holds a
 * message of the application's writer for the third (the drain's early pass-through), noting any two threads inside
 * attempt 1's call at once other than in {@code request}.
 */
class PassThroughDemandTest {

    private static final Metadata.Key<String> PREVIOUS_ATTEMPTS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);
    private static final long WAIT_SECONDS = 10;

    enum Kind {
        /** A retry policy: the committed attempt is the newest, the call passes straight through to it. */
        RETRY,
        /** Hedging: attempt 1 commits while the hedge is the newest, the call passes through its state. */
        HEDGE
    }

    private final CountDownLatch hedgeOnServer = new CountDownLatch(1);
    private final AtomicReference<ServerCall<SimpleRequest, SimpleResponse>> firstOnServer = new AtomicReference<>();
    private final CountDownLatch firstClosedBelowEngine = new CountDownLatch(1);
    private final CountDownLatch hedgeClosedBelowEngine = new CountDownLatch(1);
    private final CountDownLatch appClosed = new CountDownLatch(1);
    private final AtomicReference<Status> appCloseStatus = new AtomicReference<>();
    private final CountDownLatch firstCancelledOnServer = new CountDownLatch(1);
    private final CountDownLatch sendHeadersNow = new CountDownLatch(1);
    private final CountDownLatch secondMessageHeld = new CountDownLatch(1);
    private final CountDownLatch releaseSecondMessage = new CountDownLatch(1);
    private final AtomicInteger insideFirst = new AtomicInteger();
    /** The messages attempt 1's call was asked for below the engine, in all. */
    private final AtomicLong requestedOfFirst = new AtomicLong();
    private final List<String> overlaps = new CopyOnWriteArrayList<>();
    private final List<String> readOnServer = new CopyOnWriteArrayList<>();
    private volatile boolean holdSecondMessage;
    private volatile boolean answerOnCancel = true;
    private volatile boolean requestThrows;
    private volatile boolean hedgeCommits;
    private volatile Runnable onFirstCancel;
    private final AtomicReference<ServerCall<SimpleRequest, SimpleResponse>> hedgeOnServerCall = new AtomicReference<>();
    private ExecutorService serverExecutor;
    private Server server;
    private RetryScheduler scheduler;
    private ManagedChannel channel;

    @AfterEach
    void tearDown() throws Exception {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (serverExecutor != null) {
            serverExecutor.shutdownNow();
        }
        if (scheduler != null) {
            scheduler.close();
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void theCommittedAttemptEndsWhenCancelledAfterDemandAskedWhilePassingThrough(Kind kind) throws Exception {
        RecordingEvents events = new RecordingEvents();
        RetryingClientInterceptor engine = start(kind, events);

        ClientCall<SimpleRequest, SimpleResponse> call = passingThrough();

        call.request(5); // asked while passing through, nothing served yet
        call.cancel("the application gives up", null); // the hook below answers between the demand and the cancel

        assertThat(appClosed.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the application's close").isTrue();
        assertThat(appCloseStatus.get().getCode()).isEqualTo(Status.Code.CANCELLED);
        assertEveryAttemptClosed(kind, events);
        assertThat(EngineTestAccess.bufferPool(engine).used()).as("bytes held").isZero();
    }

    /**
     * The committed attempt's call throws from the application's request while the call passes through (sent with no
     * owner of its drain): the exception does not reach the application, the call closes CANCELLED "Failed to request
     * messages" with it as the cause (as before the commit, SendPathSideBySideTest), the attempt is cancelled on both
     * sides and reported ended, nothing is retried.
     */
    @ParameterizedTest
    @EnumSource(Kind.class)
    void aRequestThatThrowsBelowWhilePassingThroughEndsTheCallAndItsAttempt(Kind kind) throws Exception {
        answerOnCancel = false;
        RecordingEvents events = new RecordingEvents();
        RetryingClientInterceptor engine = start(kind, events);

        ClientCall<SimpleRequest, SimpleResponse> call = passingThrough();

        requestThrows = true;
        call.request(1); // throws below the engine, not here

        assertThat(appClosed.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the application's close").isTrue();
        assertThat(appCloseStatus.get().getCode()).isEqualTo(Status.Code.CANCELLED);
        assertThat(appCloseStatus.get().getDescription()).isEqualTo("Failed to request messages");
        assertThat(appCloseStatus.get().getCause()).isInstanceOf(IllegalStateException.class)
                .hasMessage("below the engine: request failed");
        assertThat(firstCancelledOnServer.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the server saw the cancel").isTrue();
        assertEveryAttemptClosed(kind, events);
        assertThat(events.ofType("retryScheduled")).isEmpty();
        assertThat(EngineTestAccess.bufferPool(engine).used()).as("bytes held").isZero();
    }

    /**
     * The commit's own drain meets demand asked through the pass-through: the hedge commits on its headers, the call
     * passes through at once (nothing is being delivered yet), and while the commit's drain cancels attempt 1 the
     * application asks for messages on its own thread: that demand goes straight to the hedge, unlogged, so the hedge
     * has been asked for more than the log holds when the same drain reaches it. It lacks nothing then: no second
     * request (a negative one failed the call "Failed to request messages"), the answers are delivered, the call closes
     * OK.
     */
    @Test
    void demandAskedThroughWhileTheCommitsDrainCancelsTheLoserIsNotAskedAgain() throws Exception {
        answerOnCancel = false;
        hedgeCommits = true;
        RecordingEvents events = new RecordingEvents();
        RetryingClientInterceptor engine = start(Kind.HEDGE, events);
        List<String> heard = new CopyOnWriteArrayList<>();
        AtomicReference<ClientCall<SimpleRequest, SimpleResponse>> callRef = new AtomicReference<>();
        AtomicReference<Boolean> passingThroughThen = new AtomicReference<>();
        onFirstCancel = () -> { // on the commit's drain, before it reaches the hedge
            passingThroughThen.set(((EngineCall<?, ?>) callRef.get()).state().passThrough());
            Thread app = new Thread(() -> callRef.get().request(2), "application");
            app.start();
            try {
                app.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        ClientCall<SimpleRequest, SimpleResponse> call = channel.newCall(Rpc.SERVER_STREAMING, CallOptions.DEFAULT);
        callRef.set(call);
        call.start(new Recording(heard), new Metadata());
        call.sendMessage(SimpleRequest.getDefaultInstance());
        call.halfClose();

        assertThat(firstCancelledOnServer.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("attempt 1 cancelled").isTrue();
        assertThat(passingThroughThen.get()).as("passing through during the commit's drain").isTrue();
        ServerCall<SimpleRequest, SimpleResponse> hedge = hedgeOnServerCall.get();
        for (String m : List.of("a", "b")) {
            hedge.sendMessage(SimpleResponse.newBuilder().setResponseMessage(m).build());
        }
        hedge.close(Status.OK, new Metadata());

        assertThat(appClosed.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the application's close").isTrue();
        assertThat(appCloseStatus.get().getCode()).as(appCloseStatus.get().toString()).isEqualTo(Status.Code.OK);
        assertThat(heard).containsExactly("a", "b");
        assertEveryAttemptClosed(Kind.HEDGE, events);
        assertThat(EngineTestAccess.bufferPool(engine).used()).as("bytes held").isZero();
    }

    /**
     * grpc-java's {@code ClientCall} is "not thread-safe except for {@code request}, which may be called from any
     * thread": while the call passes through, several threads of the application ask for messages at once (a pool of
     * workers each asking for the next message as it finishes one). Every request is counted in the committed
     * attempt's sent demand, none lost to another thread's count made at the same moment: the count equals the demand
     * that reached the attempt's call below the engine, and the cancel that follows asks for exactly what is missing up
     * to {@code Integer.MAX_VALUE} (a count that lost a request makes it ask for more: past MAX_VALUE in all, which
     * grpc-java's in-process transport wraps negative).
     */
    @ParameterizedTest
    @EnumSource(Kind.class)
    void requestsFromSeveralThreadsAtOnceWhilePassingThroughAreEachCounted(Kind kind) throws Exception {
        answerOnCancel = false;
        RecordingEvents events = new RecordingEvents();
        start(kind, events);
        ClientCall<SimpleRequest, SimpleResponse> call = passingThrough();
        EngineCall<?, ?>.Attempt first = ((EngineCall<?, ?>) call).attempt(1);
        assertThat(first.sentDemand).as("asked for nothing yet").isZero();

        int threads = 4;
        int each = 100_000;
        CyclicBarrier go = new CyclicBarrier(threads);
        ExecutorService workers = Executors.newFixedThreadPool(threads);
        try {
            List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(workers.submit(() -> {
                    go.await(WAIT_SECONDS, TimeUnit.SECONDS);
                    for (int i = 0; i < each; i++) {
                        call.request(1);
                    }
                    return null;
                }));
            }
            for (java.util.concurrent.Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            workers.shutdownNow();
        }
        assertThat(requestedOfFirst.get()).as("the demand that reached attempt 1's call").isEqualTo((long) threads * each);
        assertThat((long) first.sentDemand).as("attempt 1's sent demand").isEqualTo(requestedOfFirst.get());

        call.cancel("the application gives up", null);

        assertThat(appClosed.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the application's close").isTrue();
        assertThat(appCloseStatus.get().getCode()).isEqualTo(Status.Code.CANCELLED);
        assertEveryAttemptClosed(kind, events);
        assertThat(requestedOfFirst.get()).as("attempt 1's demand in all, its cancel's included")
                .isEqualTo(Integer.MAX_VALUE);
    }

    /** Each attempt's own call closed below the engine (its onClose ran) and each was reported ended. */
    private void assertEveryAttemptClosed(Kind kind, RecordingEvents events) throws InterruptedException {
        assertThat(firstClosedBelowEngine.await(WAIT_SECONDS, TimeUnit.SECONDS))
                .as("the committed attempt's own call closed (its onClose ran)").isTrue();
        assertThat(kind == Kind.RETRY || hedgeClosedBelowEngine.await(WAIT_SECONDS, TimeUnit.SECONDS))
                .as("the hedge's own call closed").isTrue();
        assertThat(events.attemptsEnded.get()).as("every started attempt reported ended")
                .isEqualTo(events.attemptsStarted.get());
    }

    /**
     * The drain's early pass-through (docs/design.md §18): the application's writer thread sends a second message to
     * the LIVE attempt 1, which owns its drain while that send is held below the engine; meanwhile attempt 1 commits on
     * its headers, and the listener asks for a message from {@code onHeaders} (a request may come from any thread),
     * which is logged for the owner. Once released, the owner finds only that demand missing: the call passes through
     * before it sends it (or, while the headers' delivery is still on, as that delivery ends). The request reaches the attempt, the answer to the second message is delivered, the call
     * closes OK, and no two threads were ever inside attempt 1's call at once other than in {@code request}.
     */
    @Test
    void demandAskedFromACallbackWhileTheWriterOwnsTheDrainGoesThroughTheEarlyPassThrough() throws Exception {
        RecordingEvents events = new RecordingEvents();
        start(Kind.RETRY, events);
        CountDownLatch headersHeard = new CountDownLatch(1);
        List<String> heard = new CopyOnWriteArrayList<>();
        ClientCall<SimpleRequest, SimpleResponse> call = channel.newCall(Rpc.BIDI, CallOptions.DEFAULT);
        call.start(new Recording(heard) {
            @Override
            public void onHeaders(Metadata h) {
                call.request(1); // on the callback thread, while the writer's send is held below
                headersHeard.countDown();
            }
        }, new Metadata());
        call.sendMessage(Rpc.request("m1"));
        holdSecondMessage = true;
        Thread writer = new Thread(() -> call.sendMessage(Rpc.request("m2")), "application-writer");
        writer.start();
        assertThat(secondMessageHeld.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("m2 held below the engine").isTrue();
        assertThat(((EngineCall<?, ?>) call).state().passThrough()).as("not passing through yet").isFalse();

        sendHeadersNow.countDown(); // attempt 1 commits while the writer owns its drain
        assertThat(headersHeard.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("onHeaders asked for a message").isTrue();
        releaseSecondMessage.countDown();
        writer.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        assertThat(writer.isAlive()).as("the writer returned").isFalse();
        // the pass-through begins in the writer's drain, or, when the headers' delivery is still on, as it ends
        RetryEngineTest.waitFor(() -> ((EngineCall<?, ?>) call).state().passThrough());
        call.halfClose();

        assertThat(appClosed.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the application's close").isTrue();
        assertThat(appCloseStatus.get().getCode()).isEqualTo(Status.Code.OK);
        assertThat(heard).containsExactly("re: m2");
        assertThat(readOnServer).containsExactly("m1", "m2");
        assertThat(overlaps).as("threads inside attempt 1's call at once (request aside)").isEmpty();
        assertThat(firstClosedBelowEngine.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("attempt 1 closed").isTrue();
        assertThat(events.attemptsStarted.get()).isEqualTo(1);
        assertThat(events.attemptsEnded.get()).isEqualTo(1);
    }

    /** The application's listener: the messages it hears go to {@code heard}, its close to the test's fields. */
    private class Recording extends ClientCall.Listener<SimpleResponse> {
        private final List<String> heard;

        Recording(List<String> heard) {
            this.heard = heard;
        }

        @Override
        public void onMessage(SimpleResponse message) {
            heard.add(message.getResponseMessage());
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            appCloseStatus.set(status);
            appClosed.countDown();
        }
    }

    /** A server-streaming call with no demand yet, committed to attempt 1 by its headers: it passes through. */
    private ClientCall<SimpleRequest, SimpleResponse> passingThrough() throws InterruptedException {
        CountDownLatch headers = new CountDownLatch(1);
        ClientCall<SimpleRequest, SimpleResponse> call = channel.newCall(Rpc.SERVER_STREAMING, CallOptions.DEFAULT);
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onHeaders(Metadata h) {
                headers.countDown();
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                appCloseStatus.set(status);
                appClosed.countDown();
            }
        }, new Metadata());
        call.sendMessage(SimpleRequest.getDefaultInstance());
        call.halfClose();
        assertThat(headers.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("attempt 1's headers").isTrue();
        assertThat(((EngineCall<?, ?>) call).state().passThrough()).as("the call passes through").isTrue();
        return call;
    }

    private RetryingClientInterceptor start(Kind kind, RecordingEvents events) throws Exception {
        String name = "pass-through-demand-" + kind + "-" + System.nanoTime();
        serverExecutor = Executors.newCachedThreadPool();
        server = InProcessServerBuilder.forName(name).executor(serverExecutor).addService(service(kind)).build().start();
        scheduler = RetryScheduler.create(1, "pass-through-demand");
        RetryingClientInterceptor engine = RetryingClientInterceptor.builder(kind == Kind.RETRY
                        ? Configs.channel(Configs.policy(3, 10, 10, 1, Status.Code.UNAVAILABLE))
                        : Configs.channel(Configs.hedged(Configs.hedging(2, 0, Status.Code.UNAVAILABLE))))
                .eventListener(events)
                .scheduler(scheduler)
                .build();
        channel = InProcessChannelBuilder.forName(name)
                .intercept(new AnswerBeforeFirstCancel()) // below the engine: sees every attempt
                .intercept(engine)
                .build();
        return engine;
    }

    /**
     * Attempt 1 sends its headers (with hedging: once the hedge is on the server, so that the hedge is the newest
     * attempt when attempt 1 commits) and waits; its answer is sent by {@link AnswerBeforeFirstCancel}. A hedge waits
     * for its cancel.
     */
    private ServerServiceDefinition service(Kind kind) {
        ServerCallHandler<SimpleRequest, SimpleResponse> handler = (call, headers) -> {
            boolean first = headers.get(PREVIOUS_ATTEMPTS) == null;
            call.request(1);
            return new ServerCall.Listener<>() {
                @Override
                public void onHalfClose() {
                    if (hedgeCommits) { // attempt 1 waits for its cancel; the hedge commits on its headers
                        if (!first) {
                            hedgeOnServerCall.set(call);
                            call.sendHeaders(new Metadata());
                        }
                        return;
                    }
                    if (!first) {
                        hedgeOnServer.countDown();
                        return;
                    }
                    try {
                        if (kind == Kind.HEDGE && !hedgeOnServer.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
                            call.close(Status.DEADLINE_EXCEEDED.withDescription("no hedge came"), new Metadata());
                            return;
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    firstOnServer.set(call);
                    call.sendHeaders(new Metadata());
                }

                @Override
                public void onCancel() {
                    if (first) {
                        firstCancelledOnServer.countDown();
                    }
                }
            };
        };
        ServerCallHandler<SimpleRequest, SimpleResponse> bidi = (call, headers) -> {
            call.request(1);
            return new ServerCall.Listener<>() {
                @Override
                public void onMessage(SimpleRequest message) {
                    String m = message.getRequestMessage();
                    readOnServer.add(m);
                    try {
                        if (m.equals("m1") && sendHeadersNow.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
                            call.sendHeaders(new Metadata());
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    if (m.equals("m2")) {
                        call.sendMessage(SimpleResponse.newBuilder().setResponseMessage("re: " + m).build());
                    }
                    call.request(1);
                }

                @Override
                public void onHalfClose() {
                    call.close(Status.OK, new Metadata());
                }
            };
        };
        return ServerServiceDefinition.builder(Configs.SERVICE).addMethod(Rpc.SERVER_STREAMING, handler)
                .addMethod(Rpc.BIDI, bidi).build();
    }

    /**
     * On attempt 1's call: the server answers it (a message, then OK) when the engine cancels it, after the demand the
     * engine asks for first; the cancel goes on once that answer is on the client's stream ({@link #onFirstCancel}
     * runs before). Its request throws once {@link #requestThrows}. Counts each attempt's close (after the engine
     * heard it).
     */
    private final class AnswerBeforeFirstCancel implements ClientInterceptor {
        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                CallOptions callOptions, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
                private boolean first;

                @Override
                public void start(Listener<RespT> listener, Metadata headers) {
                    first = headers.get(PREVIOUS_ATTEMPTS) == null;
                    CountDownLatch closed = first ? firstClosedBelowEngine : hedgeClosedBelowEngine;
                    super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                        @Override
                        public void onClose(Status status, Metadata trailers) {
                            super.onClose(status, trailers); // the engine heard it (attemptEnded) before the latch
                            closed.countDown();
                        }
                    }, headers);
                }

                @Override
                public void sendMessage(ReqT message) {
                    boolean entered = enter("sendMessage");
                    try {
                        if (entered && holdSecondMessage && message instanceof SimpleRequest r
                                && r.getRequestMessage().equals("m2")) {
                            secondMessageHeld.countDown();
                            releaseSecondMessage.await(WAIT_SECONDS, TimeUnit.SECONDS);
                        }
                        super.sendMessage(message);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        leave(entered);
                    }
                }

                @Override
                public void halfClose() {
                    boolean entered = enter("halfClose");
                    try {
                        super.halfClose();
                    } finally {
                        leave(entered);
                    }
                }

                /** Counts this thread in attempt 1's call (other than in request), noting any other thread in it. */
                private boolean enter(String what) {
                    if (first && insideFirst.incrementAndGet() > 1) {
                        overlaps.add(what + " on " + Thread.currentThread().getName());
                    }
                    return first;
                }

                private void leave(boolean entered) {
                    if (entered) {
                        insideFirst.decrementAndGet();
                    }
                }

                @Override
                public void request(int numMessages) {
                    if (first && requestThrows) {
                        throw new IllegalStateException("below the engine: request failed");
                    }
                    if (first) {
                        requestedOfFirst.addAndGet(numMessages);
                    }
                    super.request(numMessages);
                }

                @Override
                public void cancel(String message, Throwable cause) {
                    Runnable hook = first ? onFirstCancel : null;
                    if (hook != null) {
                        hook.run();
                    }
                    ServerCall<SimpleRequest, SimpleResponse> onServer = first && answerOnCancel ? firstOnServer.get()
                            : null;
                    if (onServer != null) { // in-process: the answer is on the client's stream when these return
                        onServer.sendMessage(SimpleResponse.newBuilder().setResponseMessage("late").build());
                        onServer.close(Status.OK, new Metadata());
                    }
                    super.cancel(message, cause);
                }
            };
        }
    }
}
