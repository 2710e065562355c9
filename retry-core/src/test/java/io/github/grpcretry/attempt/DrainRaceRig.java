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
 * The rig of the drain-ownership tests ({@link DrainOwnershipRaceTest}, {@link DrainHandOffReviewTest}): the engine over
 * {@link Below} (an interceptor below it that sees every attempt's own call) on an in-process server whose every
 * arrival the test answers; one operation of one attempt can be held on a latch while the test acts on another thread,
 * and a hook can run on the thread inside an attempt's call, after it. Timers fire only when a test fires them.
 */
abstract class DrainRaceRig {

    static final long WAIT_SECONDS = 10;

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

    final Map<Integer, CompletableFuture<Arrival>> arrivals = new ConcurrentHashMap<>();
    final Map<Integer, Demand> demandBelow = new ConcurrentHashMap<>();
    final Map<Integer, CountDownLatch> closedBelow = new ConcurrentHashMap<>();
    final Map<Integer, AtomicInteger> cancelsBelow = new ConcurrentHashMap<>();
    /** Two threads inside one attempt's call at once, other than in {@code request} (ClientCall lets that be). */
    final List<String> overlaps = new CopyOnWriteArrayList<>();
    /** What went wrong on a thread the test does not run (a held operation never let go). */
    final List<String> problems = new CopyOnWriteArrayList<>();
    final RecordingEvents events = new RecordingEvents();
    volatile Hold hold;
    /** Runs on the thread inside an attempt's call, after the call below returned (null: none). */
    volatile AfterCall afterCall;
    ExecutorService serverExecutor;
    ExecutorService work;
    ManualTimers timers;
    RetryScheduler scheduler;
    RetryingClientInterceptor engine;
    Server server;
    ManagedChannel channel;

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

    /** {@code a} answers (headers, the message "answer", OK) and the application closes OK with that answer. */
    void answerOk(Application app, Arrival a) throws InterruptedException {
        a.call.sendHeaders(new Metadata());
        a.call.sendMessage(response("answer"));
        a.call.close(Status.OK, new Metadata());
        assertThat(app.listener.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
        assertThat(app.heard()).containsExactly("answer");
    }

    /** One close, the call's contract kept, every attempt closed below and reported ended, no thread overlap. */
    void assertCleanEnd(Application app, int attempts) throws InterruptedException {
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
    Thread holdWhile(Application app, Held held) throws InterruptedException {
        return holdWhile(app, held, held != Held.SEND_MESSAGE);
    }

    Thread holdWhile(Application app, Held held, boolean sendFirst) throws InterruptedException {
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
    void release(Thread owner) throws InterruptedException {
        hold.release.countDown();
        owner.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        assertThat(owner.isAlive()).as("the owner returned").isFalse();
    }

    Arrival arrival(int attempt) throws Exception {
        return arrivals.computeIfAbsent(attempt, k -> new CompletableFuture<>()).get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    Demand demand(int attempt) {
        return demandBelow.computeIfAbsent(attempt, k -> new Demand());
    }

    CountDownLatch closed(int attempt) {
        return closedBelow.computeIfAbsent(attempt, k -> new CountDownLatch(1));
    }

    AtomicInteger cancels(int attempt) {
        return cancelsBelow.computeIfAbsent(attempt, k -> new AtomicInteger());
    }

    /** The number of the attempt whose headers these are (the engine's count of the attempts before it). */
    static int attemptNumber(Metadata headers) {
        String previous = headers.get(RetryingCall.PREVIOUS_ATTEMPTS);
        return previous == null ? 1 : Integer.parseInt(previous) + 1;
    }

    static SimpleResponse response(String m) {
        return SimpleResponse.newBuilder().setResponseMessage(m).build();
    }

    /** The engine over {@link Below} on an in-process server with an executor of its own; timers fired by the test. */
    void start(Kind kind, long hedgingDelayMillis) throws Exception {
        start(kind == Kind.RETRY ? Configs.channel(Configs.policy(3, 10, 10, 1, Status.Code.UNAVAILABLE))
                : Configs.channel(Configs.hedged(Configs.hedging(2, hedgingDelayMillis, Status.Code.UNAVAILABLE))));
    }

    void start(ChannelRetryConfig config) throws Exception {
        start(config, false);
    }

    /** {@code directWork}: a timer the test fires runs its task on the test's thread, before {@code fireNext} returns. */
    void start(ChannelRetryConfig config, boolean directWork) throws Exception {
        String name = "drain-ownership-" + System.nanoTime();
        serverExecutor = Executors.newCachedThreadPool();
        server = InProcessServerBuilder.forName(name).executor(serverExecutor).addService(service()).build().start();
        timers = new ManualTimers();
        work = Executors.newCachedThreadPool();
        scheduler = RetryScheduler.of(timers, directWork ? Runnable::run : work);
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
    ServerServiceDefinition service() {
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
    static final class Arrival {
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
    final class Application {
        final CountDownLatch headers = new CountDownLatch(1);
        final ClientCall<SimpleRequest, SimpleResponse> call;
        final ContractListener<SimpleResponse> listener;
        /** What the application does in {@code onReady} (null: nothing). */
        volatile Runnable onReady;

        Application(MethodDescriptor<SimpleRequest, SimpleResponse> method) {
            call = channel.newCall(method, CallOptions.DEFAULT);
            listener = new ContractListener<>(new ClientCall.Listener<>() {
                @Override
                public void onHeaders(Metadata h) {
                    headers.countDown();
                }

                @Override
                public void onReady() {
                    Runnable r = onReady;
                    if (r != null) {
                        r.run();
                    }
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
    static final class Demand {
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

    /** What a test does on the thread inside an attempt's call, after the call below returned. */
    interface AfterCall {
        void after(int attempt, Held op, ClientCall.Listener<?> engineSide);
    }

    /** Which operation of which attempt is held, once: entered when a thread is inside it, let go by release. */
    static final class Hold {
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
    final class Below implements ClientInterceptor {
        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                CallOptions callOptions, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
                private final AtomicInteger inside = new AtomicInteger();
                private volatile int attempt;
                private volatile Listener<RespT> engineSide; // the engine's listener of this attempt

                @Override
                public void start(Listener<RespT> listener, Metadata headers) {
                    attempt = attemptNumber(headers);
                    engineSide = listener;
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
                        after(Held.SEND_MESSAGE);
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
                        after(Held.HALF_CLOSE);
                    } finally {
                        leave();
                    }
                }

                @Override
                public void request(int numMessages) {
                    holdIf(Held.REQUEST);
                    demand(attempt).add(numMessages);
                    super.request(numMessages);
                    after(Held.REQUEST);
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

                private void after(Held op) {
                    AfterCall i = afterCall;
                    if (i != null) {
                        i.after(attempt, op, engineSide);
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
    static final class ManualTimers extends ScheduledThreadPoolExecutor {
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
