package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptors;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
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
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The engine against grpc-java's own retry (same service config, same in-process server) where an application, a
 * channel's shut-down or the engine's scheduler drive a {@code ClientCall} beyond the usual send and read (the
 * channel's shut-down, retry metadata in response headers, a fatal status after the scheduler closed, the call's
 * {@code Context} in the engine's close, nothing after a cancel): grpc-java's result is the control; where it differs on purpose (the callbacks after a
 * cancel, the graceful shut-down) both behaviours are asserted. Waits are on the server's arrivals, the engine's
 * events and the application's callbacks; time bounds are far below the configured backoffs.
 */
class ContractSideBySideTest {

    private static final Metadata.Key<String> PREVIOUS = RetryingCall.PREVIOUS_ATTEMPTS;
    private static final Metadata.Key<String> DETAIL = Metadata.Key.of("detail", Metadata.ASCII_STRING_MARSHALLER);
    private static final Context.Key<String> TENANT = Context.key("tenant");
    private static final long WAIT_S = 20;
    /** A backoff no test waits out: a call that closes within {@link #WAIT_S} did not wait for it. */
    private static final long LONG_MS = 600_000;

    /**
     * grpc-java's retry; the engine by {@code builder.intercept}; the engine over the ManagedChannel itself; the
     * engine by {@code builder.intercept}, told of the channel ({@code watchShutdown}).
     */
    enum Wiring { NATIVE, BUILDER, WRAPPED, WATCHED }

    /** One arrival at the server, answered by the test's {@link Answer}. */
    static final class Arrival {
        final int index;
        final ServerCall<SimpleRequest, SimpleResponse> call;
        final CountDownLatch ended = new CountDownLatch(1);

        Arrival(int index, ServerCall<SimpleRequest, SimpleResponse> call) {
            this.index = index;
            this.call = call;
        }

        void respond(Metadata headers) {
            call.sendHeaders(headers);
            call.sendMessage(SimpleResponse.newBuilder().setResponseMessage("r" + index).build());
            call.close(Status.OK, new Metadata());
        }
    }

    interface Answer {
        void arrived(Arrival a);
    }

    private final String name = "contract-" + System.nanoTime();
    private final AtomicInteger arrivalCount = new AtomicInteger();
    private final BlockingQueue<Arrival> arrivals = new LinkedBlockingQueue<>();
    private volatile Answer answer = a -> a.respond(new Metadata());
    private Server server;
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final List<RetryScheduler> schedulers = new ArrayList<>();
    private final ExecutorService app = Executors.newCachedThreadPool();
    /** The engine's events of the client made last: type and attempt number. */
    private final BlockingQueue<String> events = new LinkedBlockingQueue<>();
    private final AtomicInteger backoffs = new AtomicInteger();
    private RetryingClientInterceptor engine;

    @BeforeEach
    void startServer() throws Exception {
        ServerCallHandler<SimpleRequest, SimpleResponse> handler = (call, headers) -> {
            Arrival a = new Arrival(arrivalCount.incrementAndGet(), call);
            call.request(Integer.MAX_VALUE);
            arrivals.add(a);
            answer.arrived(a);
            return new ServerCall.Listener<>() {
                @Override
                public void onCancel() {
                    a.ended.countDown();
                }

                @Override
                public void onComplete() {
                    a.ended.countDown();
                }
            };
        };
        server = InProcessServerBuilder.forName(name)
                .addService(ServerServiceDefinition.builder(Configs.SERVICE).addMethod(Rpc.UNARY, handler)
                        .addMethod(Rpc.BIDI, handler).build())
                .build().start();
    }

    @AfterEach
    void stop() throws Exception {
        for (ManagedChannel c : channels) {
            c.shutdownNow();
            assertThat(c.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
        }
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        for (RetryScheduler s : schedulers) {
            assertThat(EngineTestAccess.outstandingTimers(s)).as("timers left").isZero();
            s.close();
        }
        app.shutdownNow();
    }

    /** A fresh client and server count; {@code scheduler} null: the engine's default (a shared() of its own). */
    private Channel client(Wiring w, ChannelRetryConfig config, @Nullable RetryScheduler scheduler) {
        arrivalCount.set(0);
        arrivals.clear();
        events.clear();
        backoffs.set(0);
        InProcessChannelBuilder b = InProcessChannelBuilder.forName(name);
        ManagedChannel channel;
        if (w == Wiring.NATIVE) {
            channel = b.defaultServiceConfig(config.serviceConfig().toServiceConfigMap(true)).enableRetry()
                    .maxRetryAttempts(config.maxAttemptsCap()).maxHedgedAttempts(config.maxAttemptsCap()).build();
            channels.add(channel);
            return channel;
        }
        engine = RetryingClientInterceptor.builder(config).scheduler(scheduler).eventListener(new RetryEventListener() {
            @Override
            public void retryScheduled(CallTarget target, int nextAttemptNumber, long delayNanos,
                    DelaySource source) {
                backoffs.incrementAndGet();
                events.add("retryScheduled " + nextAttemptNumber);
            }

            @Override
            public void committed(CallTarget target, int attemptNumber) {
                events.add("committed " + attemptNumber);
            }
        }).build();
        b.defaultServiceConfig(config.serviceConfig().toServiceConfigMap(false));
        if (w == Wiring.BUILDER || w == Wiring.WATCHED) {
            channel = b.intercept(engine).build();
            channels.add(w == Wiring.WATCHED ? engine.watchShutdown(channel) : channel);
            return channel;
        }
        channel = b.build();
        channels.add(channel);
        return ClientInterceptors.intercept(channel, engine);
    }

    private ManagedChannel lastChannel() {
        return channels.get(channels.size() - 1);
    }

    private RetryScheduler scheduler() {
        RetryScheduler s = RetryScheduler.create(1, "contract");
        schedulers.add(s);
        return s;
    }

    private static ChannelRetryConfig retry(int maxAttempts, long backoffMs) {
        return Configs.channel(Configs.policy(maxAttempts, backoffMs, backoffMs, 1, Status.Code.UNAVAILABLE));
    }

    private static ChannelRetryConfig hedging(int maxAttempts, long delayMs) {
        return Configs.channel(Configs.hedged(Configs.hedging(maxAttempts, delayMs, Status.Code.UNAVAILABLE)));
    }

    private Arrival arrival() throws InterruptedException {
        Arrival a = arrivals.poll(WAIT_S, TimeUnit.SECONDS);
        assertThat(a).as("an arrival").isNotNull();
        return a;
    }

    private void awaitEvent(String event) throws InterruptedException {
        for (String e = events.poll(WAIT_S, TimeUnit.SECONDS); !event.equals(e); e = events.poll(WAIT_S, TimeUnit.SECONDS)) {
            assertThat(e).as("the engine's event " + event).isNotNull();
        }
    }

    /** A unary call, its request sent and half-closed; the listener records what the application heard. */
    private static Heard call(Channel ch) {
        Heard heard = new Heard();
        ClientCall<SimpleRequest, SimpleResponse> call = ch.newCall(Rpc.UNARY, CallOptions.DEFAULT);
        heard.call = call;
        call.start(heard.listener, new Metadata());
        call.request(1);
        call.sendMessage(Rpc.request("q"));
        call.halfClose();
        return heard;
    }

    /** What the application heard, checked against the call contract. */
    static final class Heard {
        final AtomicReference<@Nullable Metadata> headers = new AtomicReference<>();
        final AtomicReference<@Nullable String> tenantAtClose = new AtomicReference<>();
        final ContractListener<SimpleResponse> listener = new ContractListener<>(new ClientCall.Listener<>() {
            @Override
            public void onHeaders(Metadata h) {
                headers.set(h);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                tenantAtClose.set(TENANT.get());
            }
        });
        ClientCall<SimpleRequest, SimpleResponse> call;

        Status await() throws InterruptedException {
            Status s = listener.awaitClose(WAIT_S, TimeUnit.SECONDS);
            listener.assertContract();
            return s;
        }

        @Nullable String headersPrevious() {
            Metadata h = headers.get();
            return h == null ? null : h.get(PREVIOUS);
        }
    }

    // ------------------------------------------------------------------ 3: the channel's own shut-down

    /** How a call ended: code, description, the server's arrivals and the backoffs the engine scheduled. */
    private record Ended(Status.Code code, @Nullable String description, int arrivals, int backoffs) {
    }

    private Ended ended(Status s) {
        return new Ended(s.getCode(), s.getDescription(), arrivalCount.get(), backoffs.get());
    }

    /** A call whose first attempt failed and that waits for a retry in {@code backoffMs}. */
    private Heard inBackoff(Wiring w, long backoffMs) throws Exception {
        answer = a -> {
            if (a.index == 1) {
                a.call.close(Status.UNAVAILABLE, new Metadata());
            } else {
                a.respond(new Metadata());
            }
        };
        Heard h = call(client(w, retry(5, backoffMs), scheduler()));
        arrival().ended.await(WAIT_S, TimeUnit.SECONDS);
        if (w != Wiring.NATIVE) {
            awaitEvent("retryScheduled 2");
        }
        return h;
    }

    @Test
    void shutdownNowEndsACallInBackoffAtOnceWhenTheEngineKnowsTheManagedChannel() throws Exception {
        List<Ended> seen = new ArrayList<>();
        for (Wiring w : List.of(Wiring.NATIVE, Wiring.WRAPPED, Wiring.WATCHED)) {
            Heard h = inBackoff(w, LONG_MS);
            lastChannel().shutdownNow();
            seen.add(ended(h.await())); // within WAIT_S: not after the backoff
            assertThat(lastChannel().awaitTermination(WAIT_S, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(seen.get(0)).isEqualTo(new Ended(Status.Code.UNAVAILABLE, "Channel shutdownNow invoked", 1, 0));
        assertThat(seen.subList(1, 3)).as("the engine over the ManagedChannel, or told of it")
                .containsOnly(new Ended(Status.Code.UNAVAILABLE, "Channel shutdown invoked", 1, 1));
    }

    @Test
    void shutdownNowEndsACallInBackoffWhenItsTimerFiresWithoutARetryOnTheBuildersChannel() throws Exception {
        Heard nat = inBackoff(Wiring.NATIVE, LONG_MS);
        lastChannel().shutdownNow();
        assertThat(ended(nat.await())).isEqualTo(new Ended(Status.Code.UNAVAILABLE, "Channel shutdownNow invoked", 1, 0));

        // builder.intercept(engine) hands the engine no ManagedChannel: the backoff it is in runs out, no other follows
        Heard ours = inBackoff(Wiring.BUILDER, 300);
        lastChannel().shutdownNow();
        assertThat(ended(ours.await())).isEqualTo(new Ended(Status.Code.UNAVAILABLE, "Channel shutdown invoked", 1, 1));
    }

    @Test
    void shutdownNowEndsACallWithAnAttemptInFlightAsGrpcJavasDoes() throws Exception {
        answer = a -> { }; // never answers
        for (ChannelRetryConfig config : List.of(retry(5, LONG_MS), hedging(3, LONG_MS))) {
            List<Ended> seen = new ArrayList<>();
            for (Wiring w : Wiring.values()) {
                Heard h = call(client(w, config, scheduler()));
                arrival();
                lastChannel().shutdownNow();
                seen.add(ended(h.await()));
            }
            assertThat(seen.get(0)).isEqualTo(new Ended(Status.Code.UNAVAILABLE, "Channel shutdownNow invoked", 1, 0));
            assertThat(seen.subList(1, seen.size())).as("the engine, every wiring").containsOnly(seen.get(0));
        }
    }

    @Test
    void aCallAfterShutdownFailsAtOnceAsGrpcJavasDoes() throws Exception {
        for (ChannelRetryConfig config : List.of(retry(5, LONG_MS), hedging(3, LONG_MS))) {
            List<Ended> seen = new ArrayList<>();
            for (Wiring w : Wiring.values()) {
                Channel ch = client(w, config, scheduler());
                lastChannel().shutdown();
                seen.add(ended(call(ch).await()));
            }
            assertThat(seen.get(0)).isEqualTo(new Ended(Status.Code.UNAVAILABLE, "Channel shutdown invoked", 0, 0));
            assertThat(seen.subList(1, seen.size())).as("the engine, every wiring").containsOnly(seen.get(0));
        }
    }

    @Test
    void afterAGracefulShutdownGrpcJavaStillSendsTheRetryTheEngineCannot() throws Exception {
        Heard nat = inBackoff(Wiring.NATIVE, 300);
        lastChannel().shutdown();
        assertThat(ended(nat.await())).as("grpc-java").isEqualTo(new Ended(Status.Code.OK, null, 2, 0));

        Heard ours = inBackoff(Wiring.BUILDER, 300);
        lastChannel().shutdown();
        assertThat(ended(ours.await())).as("the engine: docs/differences.md")
                .isEqualTo(new Ended(Status.Code.UNAVAILABLE, "Channel shutdown invoked", 1, 1));
    }

    @Test
    void closingTheSchedulerOfAnEngineOnTheSharedThreadsEndsItsCallsAndNoOtherEngines() throws Exception {
        answer = a -> {
            if (a.index == 1) {
                a.call.close(Status.UNAVAILABLE, new Metadata());
            } else {
                a.respond(new Metadata());
            }
        };
        Heard h = call(client(Wiring.BUILDER, retry(3, LONG_MS), null));
        awaitEvent("retryScheduled 2");
        engine.scheduler().close();
        Status s = h.await();
        assertThat(s.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(s.getDescription()).isEqualTo(EngineCall.SHUTTING_DOWN.getDescription());

        Heard other = call(client(Wiring.BUILDER, retry(3, 5), null)); // another engine on the shared threads
        assertThat(other.await().getCode()).isEqualTo(Status.Code.OK);
        assertThat(arrivalCount).hasValue(2);
    }

    // ------------------------------------------------------------------ 6: the retry metadata in response headers

    /** What an application reads of the retry metadata: the code, the headers' count (or "none"), the trailers'. */
    private record RetryMetadata(Status.Code code, String inHeaders, @Nullable String inTrailers) {
    }

    private RetryMetadata retryMetadata(Wiring w, ChannelRetryConfig config, Answer script) throws Exception {
        answer = script;
        Heard h = call(client(w, config, null));
        Status s = h.await();
        return new RetryMetadata(s.getCode(), h.headers.get() == null ? "no headers" : String.valueOf(h.headersPrevious()),
                h.listener.trailers().get(PREVIOUS));
    }

    @Test
    void responseHeadersOfARetryCarryTheEarlierAttemptsAsGrpcJavasDo() throws Exception {
        Answer secondAnswers = a -> {
            if (a.index < 3) {
                a.call.close(Status.UNAVAILABLE.withDescription("trailers only"), new Metadata());
            } else {
                Metadata headers = new Metadata();
                headers.put(PREVIOUS, "7"); // the server's own value: replaced by the client's count
                a.respond(headers);
            }
        };
        RetryMetadata nat = retryMetadata(Wiring.NATIVE, retry(4, 5), secondAnswers);
        assertThat(nat).isEqualTo(new RetryMetadata(Status.Code.OK, "2", null));
        assertThat(retryMetadata(Wiring.BUILDER, retry(4, 5), secondAnswers)).isEqualTo(nat);

        Answer firstAnswers = a -> a.respond(new Metadata()); // no earlier attempt: nothing added
        RetryMetadata natFirst = retryMetadata(Wiring.NATIVE, retry(4, 5), firstAnswers);
        assertThat(natFirst).isEqualTo(new RetryMetadata(Status.Code.OK, "null", null));
        assertThat(retryMetadata(Wiring.BUILDER, retry(4, 5), firstAnswers)).isEqualTo(natFirst);

        Answer trailersOnly = a -> a.call.close(a.index == 1 ? Status.UNAVAILABLE : Status.INTERNAL, new Metadata());
        RetryMetadata natTrailersOnly = retryMetadata(Wiring.NATIVE, retry(4, 5), trailersOnly);
        assertThat(natTrailersOnly).isEqualTo(new RetryMetadata(Status.Code.INTERNAL, "no headers", null));
        assertThat(retryMetadata(Wiring.BUILDER, retry(4, 5), trailersOnly)).isEqualTo(natTrailersOnly);
    }

    @Test
    void responseHeadersOfAHedgeCarryTheEarlierAttemptsAsGrpcJavasDo() throws Exception {
        Answer secondWins = a -> { // the first is left open (cancelled as the loser); the hedge answers
            if (a.index == 2) {
                a.respond(new Metadata());
            }
        };
        RetryMetadata nat = retryMetadata(Wiring.NATIVE, hedging(2, 20), secondWins);
        assertThat(nat).isEqualTo(new RetryMetadata(Status.Code.OK, "1", null));
        assertThat(retryMetadata(Wiring.BUILDER, hedging(2, 20), secondWins)).isEqualTo(nat);
    }

    // ------------------------------------------------------------------ 7: a fatal answer after the scheduler closed

    private record Answered(Status.Code code, @Nullable String description, @Nullable String detail) {
    }

    @Test
    void aHedgedCallAfterTheSchedulerClosedStillDeliversTheServersFatalStatus() throws Exception {
        answer = a -> {
            Metadata trailers = new Metadata();
            trailers.put(DETAIL, "field q");
            a.call.close(Status.INVALID_ARGUMENT.withDescription("bad request"), trailers);
        };
        List<Answered> seen = new ArrayList<>();
        for (Wiring w : List.of(Wiring.NATIVE, Wiring.BUILDER)) {
            RetryScheduler closed = scheduler();
            closed.close(); // grpc-java has no such scheduler: its result is the one the engine must give
            Heard h = call(client(w, hedging(3, LONG_MS), closed));
            Status s = h.await();
            seen.add(new Answered(s.getCode(), s.getDescription(), h.listener.trailers().get(DETAIL)));
            assertThat(arrivalCount).as(w + ": arrivals").hasValue(1);
        }
        assertThat(seen.get(0)).isEqualTo(new Answered(Status.Code.INVALID_ARGUMENT, "bad request", "field q"));
        assertThat(seen.get(1)).as("the engine").isEqualTo(seen.get(0));
    }

    // ------------------------------------------------------------------ 8: the engine's own close within the Context

    @Test
    void theCloseAfterACancelInBackoffRunsInTheCallsContextAsGrpcJavasDoes() throws Exception {
        answer = a -> a.call.close(Status.UNAVAILABLE, new Metadata());
        List<String> tenants = new ArrayList<>();
        for (Wiring w : List.of(Wiring.NATIVE, Wiring.BUILDER)) {
            Channel ch = client(w, retry(3, LONG_MS), scheduler());
            Heard h = Context.current().withValue(TENANT, "tenant-7").call(() -> call(ch));
            arrival().ended.await(WAIT_S, TimeUnit.SECONDS);
            if (w != Wiring.NATIVE) {
                awaitEvent("retryScheduled 2"); // in backoff: the engine itself closes the call
            }
            h.call.cancel("the application gives up", null); // from this thread, outside the call's Context
            assertThat(h.await().getCode()).isEqualTo(Status.Code.CANCELLED);
            tenants.add(h.tenantAtClose.get());
        }
        assertThat(tenants.get(0)).as("grpc-java").isEqualTo("tenant-7");
        assertThat(tenants.get(1)).as("the engine").isEqualTo("tenant-7");
    }

    @Test
    void theCloseWhenTheSchedulerClosesRunsInTheCallsContext() throws Exception {
        answer = a -> a.call.close(Status.UNAVAILABLE, new Metadata());
        RetryScheduler scheduler = scheduler();
        Channel ch = client(Wiring.BUILDER, retry(3, LONG_MS), scheduler);
        Heard h = Context.current().withValue(TENANT, "tenant-8").call(() -> call(ch));
        awaitEvent("retryScheduled 2");
        scheduler.close();
        assertThat(h.await().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(h.tenantAtClose.get()).isEqualTo("tenant-8");
    }

    // ------------------------------------------------------------------ 9: nothing but the close after cancel()

    /** Records what the application hears after its cancel() returned, besides the close; blocks in one callback. */
    private static final class AfterCancel {
        final AtomicBoolean cancelReturned = new AtomicBoolean();
        final List<String> after = java.util.Collections.synchronizedList(new ArrayList<>());
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch leave = new CountDownLatch(1);
        final ContractListener<SimpleResponse> listener = new ContractListener<>(new NamedCallbacks(this::heard));
        private final String blockIn;

        AfterCancel(String blockIn) {
            this.blockIn = blockIn;
        }

        private void heard(String callback) {
            if (cancelReturned.get() && !callback.equals("onClose")) {
                after.add(callback);
            }
            if (callback.equals(blockIn) && entered.getCount() > 0) { // the application is busy in it
                entered.countDown();
                try {
                    leave.await(WAIT_S, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /** Cancels from this thread, then lets the blocked callback return; what came after, once closed CANCELLED. */
        List<String> cancel(ClientCall<?, ?> call) throws InterruptedException {
            call.cancel("the application gives up", null);
            cancelReturned.set(true);
            leave.countDown();
            assertThat(listener.awaitClose(WAIT_S, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.CANCELLED);
            listener.assertContract();
            return List.copyOf(after);
        }
    }

    /** The application is in onHeaders when the server's message comes, and cancels before it returns. */
    private List<String> heardAfterCancelInOnHeaders(Wiring w) throws Exception {
        CountDownLatch sent = new CountDownLatch(1);
        AtomicReference<Arrival> arrival = new AtomicReference<>();
        answer = a -> {
            arrival.set(a);
            a.call.sendHeaders(new Metadata());
        };
        Channel ch = client(w, retry(3, 5), scheduler());
        AfterCancel app = new AfterCancel("onHeaders");
        ClientCall<SimpleRequest, SimpleResponse> call = ch.newCall(Rpc.UNARY, CallOptions.DEFAULT);
        call.start(app.listener, new Metadata());
        call.request(1);
        call.sendMessage(Rpc.request("q"));
        call.halfClose();
        assertThat(app.entered.await(WAIT_S, TimeUnit.SECONDS)).as(w + ": in onHeaders").isTrue();
        arrival.get().call.sendMessage(SimpleResponse.newBuilder().setResponseMessage("r").build()); // queued behind it
        return app.cancel(call);
    }

    @Test
    void afterCancelReturnsTheApplicationHearsOnlyItsCloseWhereGrpcJavaDeliversWhatWasQueued() throws Exception {
        assertThat(heardAfterCancelInOnHeaders(Wiring.NATIVE)).as("grpc-java (differs on purpose: docs/differences.md)")
                .containsExactly("onMessage");
        assertThat(heardAfterCancelInOnHeaders(Wiring.BUILDER)).as("the engine: docs/design.md §18").isEmpty();
    }

    /**
     * The engine's own queue: a hedge's headers wait behind the losing attempt's onReady, in which the application
     * is busy when it cancels. (grpc-java gives a hedged call no onReady here, so it cannot be driven the same way;
     * where it can, above, it delivers what was queued.)
     */
    @Test
    void aHedgesHeadersQueuedBehindAnotherAttemptsOnReadyAreNotDeliveredAfterCancel() throws Exception {
        CountDownLatch headersSent = new CountDownLatch(1);
        answer = a -> { // the first attempt stays open; the hedge answers with headers and stays open
            if (a.index == 2) {
                a.call.sendHeaders(new Metadata());
                headersSent.countDown();
            }
        };
        Channel ch = client(Wiring.BUILDER, hedging(2, 50), scheduler());
        AfterCancel app = new AfterCancel("onReady");
        ClientCall<SimpleRequest, SimpleResponse> call = ch.newCall(Rpc.BIDI, CallOptions.DEFAULT); // a unary hears no onReady
        this.app.execute(() -> { // the application's thread: its onReady may come from within start()
            call.start(app.listener, new Metadata());
            call.request(1);
            call.sendMessage(Rpc.request("q"));
            call.halfClose();
        });
        assertThat(app.entered.await(WAIT_S, TimeUnit.SECONDS)).as("the first onReady").isTrue();
        assertThat(headersSent.await(WAIT_S, TimeUnit.SECONDS)).as("the hedge's headers").isTrue();
        awaitEvent("committed 2"); // the hedge's headers are queued behind the onReady being delivered
        assertThat(app.cancel(call)).isEmpty();
    }
}
