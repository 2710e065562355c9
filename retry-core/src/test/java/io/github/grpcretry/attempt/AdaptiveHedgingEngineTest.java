package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.AdaptiveHedgingPolicy;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.grpc.CallOptions;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The adaptive hedging delay inside the engine, with a real in-process server and a ticker the server moves: a
 * call's latency is what its caller waited, from the call's start to its end (a first attempt cancelled because a
 * hedge won never reports, and is not lost), and hedges stay within max-extra-load of the calls.
 */
class AdaptiveHedgingEngineTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final String METHOD = "grpc.testing.SimpleService/UnaryRpc";
    private static final Metadata.Key<String> PREVIOUS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);

    private final String name = "adaptive-" + System.nanoTime();
    private final AtomicLong ticker = new AtomicLong(5_000_000_000L);
    private final AdaptiveHedgingRegistry registry = new AdaptiveHedgingRegistry(ticker::get);
    private final AtomicInteger firstAttempts = new AtomicInteger();
    private final AtomicInteger hedges = new AtomicInteger();
    private final ConcurrentLinkedQueue<CountDownLatch> cancelledFirstAttempts = new ConcurrentLinkedQueue<>();
    private Server server;
    private ManagedChannel channel;
    private RetryScheduler scheduler;

    @BeforeEach
    void startServer() throws Exception {
        scheduler = RetryScheduler.create(1, name);
        // a first attempt takes 30 ms of the ticker and never answers; the hedge takes 20 ms more and answers
        ServerInterceptor attemptNumber = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                    ServerCallHandler<Q, R> next) {
                boolean first = !headers.containsKey(PREVIOUS);
                return io.grpc.Contexts.interceptCall(Context.current().withValue(FIRST, first), call, headers, next);
            }
        };
        server = InProcessServerBuilder.forName(name).directExecutor()
                .addService(ServerInterceptors.intercept(new SimpleServiceGrpc.SimpleServiceImplBase() {
                    @Override
                    public void unaryRpc(SimpleRequest request, StreamObserver<SimpleResponse> out) {
                        if (FIRST.get()) {
                            firstAttempts.incrementAndGet();
                            ticker.addAndGet(30 * MS);
                            CountDownLatch cancelled = new CountDownLatch(1);
                            cancelledFirstAttempts.add(cancelled);
                            Context.current().addListener(c -> cancelled.countDown(), Runnable::run);
                            return; // held: only a hedge can answer the call
                        }
                        hedges.incrementAndGet();
                        ticker.addAndGet(20 * MS);
                        out.onNext(SimpleResponse.newBuilder().setResponseMessage("hedge").build());
                        out.onCompleted();
                    }
                }, attemptNumber)).build().start();
    }

    private static final Context.Key<Boolean> FIRST = Context.key("first-attempt");

    @AfterEach
    void stop() throws Exception {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        assertThat(EngineTestAccess.outstandingTimers(scheduler)).as("timers outstanding after the test").isZero();
        scheduler.close();
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    /** A channel hedging every call after 1 ms (the configured delay, until min-samples calls were seen). */
    private RecordingEvents client(AdaptiveHedgingPolicy adaptive) {
        RecordingEvents events = new RecordingEvents();
        ChannelRetryConfig config = Configs.channel(Configs.hedged(Configs.hedging(2, 1, Status.Code.UNAVAILABLE)))
                .withAdaptiveHedging(adaptive);
        channel = InProcessChannelBuilder.forName(name).directExecutor()
                .intercept(RetryingClientInterceptor.builder(config).eventListener(events).scheduler(scheduler)
                        .adaptiveHedging(registry).build())
                .build();
        return events;
    }

    private AdaptiveDelay state(AdaptiveHedgingPolicy adaptive) {
        return registry.channel("test", adaptive).method(METHOD);
    }

    @Test
    void theLatencyIsWhatTheCallerWaitedNotTheWinningAttemptsOwn() throws Exception {
        AdaptiveHedgingPolicy adaptive = new AdaptiveHedgingPolicy(0.5, Duration.ofMillis(1), null, 5,
                Duration.ofSeconds(10));
        client(adaptive);
        AdaptiveDelay state = state(adaptive);
        for (int i = 0; i < 10; i++) {
            state.onCall(); // calls without a hedge of their own: room for one hedge per engine call
        }
        for (int i = 0; i < 5; i++) {
            Rpc.Outcome o = Rpc.unary(channel, CallOptions.DEFAULT, "a");
            assertThat(o.code()).isEqualTo(Status.Code.OK);
            assertThat(o.responses()).containsExactly("hedge");
        }
        for (CountDownLatch cancelled : cancelledFirstAttempts) {
            assertThat(cancelled.await(5, TimeUnit.SECONDS)).as("the losing first attempt was cancelled").isTrue();
        }
        ticker.addAndGet(Duration.ofSeconds(1).toNanos());
        // 30 ms before the hedge + 20 ms of the hedge: 50 ms (the hedge's own 20 ms would give 20.5 at most)
        assertThat(state.delayNanos(MS)).isBetween(50 * MS, 52 * MS);
        assertThat(state.windowSamples()).isEqualTo(5);
        assertThat(registry.delays("test")).singleElement()
                .satisfies(d -> assertThat(d.adapted()).isTrue());
    }

    @Test
    void hedgesBeyondTheExtraLoadOfTheCallsAreNotSent() throws Exception {
        AdaptiveHedgingPolicy adaptive = new AdaptiveHedgingPolicy(0.5, Duration.ofMillis(1), null, 100,
                Duration.ofSeconds(10));
        RecordingEvents events = client(adaptive);
        AdaptiveDelay state = state(adaptive);
        state.onCall();
        state.onCall(); // 2 calls: with the engine's two, 2 hedges in 4 calls
        for (int i = 0; i < 2; i++) {
            assertThat(Rpc.unary(channel, CallOptions.DEFAULT, "a").code()).isEqualTo(Status.Code.OK);
        }
        assertThat(state.windowHedges()).isEqualTo(2);

        // a fifth call may not hedge (3 of 5 > 50 %): its held first attempt ends at its deadline
        Rpc.Outcome refused = Rpc.unary(channel, CallOptions.DEFAULT.withDeadlineAfter(1, TimeUnit.SECONDS), "a");
        assertThat(refused.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(hedges.get()).isEqualTo(2);
        assertThat(events.attemptsStarted.get()).as("2 + 2 + the refused call's first").isEqualTo(5);
        assertThat(events.suppressions()).as("the refused hedge, then the deadline's status").startsWith(SuppressionReason.MAX_EXTRA_LOAD)
                .doesNotContain(SuppressionReason.BUDGET);
        assertThat(state.windowHedges()).isEqualTo(2);
        assertThat(state.windowCalls()).isEqualTo(5);
    }

    @Test
    void theConfiguredDelayAppliesUntilMinSamplesCallsWereSeen() throws Exception {
        AdaptiveHedgingPolicy adaptive = new AdaptiveHedgingPolicy(0.5, Duration.ofMillis(1), null, 100,
                Duration.ofSeconds(10));
        client(adaptive);
        AdaptiveDelay state = state(adaptive);
        state.onCall();
        assertThat(Rpc.unary(channel, CallOptions.DEFAULT, "a").code()).isEqualTo(Status.Code.OK);
        ticker.addAndGet(Duration.ofSeconds(1).toNanos());
        assertThat(state.adapted()).isFalse();
        assertThat(state.delay()).as("the configured hedging.delay").isEqualTo(Duration.ofMillis(1));
    }
}
