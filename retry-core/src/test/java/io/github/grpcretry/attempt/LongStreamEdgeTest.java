package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.LongStreamRig.OffsetResumption;
import io.github.grpcretry.attempt.LongStreamRig.Reader;
import io.github.grpcretry.policy.AdaptiveHedgingPolicy;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ConnectivityState;
import io.grpc.Context;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * Long streams driven the less common ways over Netty on loopback: the demand a resumption carries, resumed attempts that
 * fail before any message, resumers that repeat themselves, idle cuts on hedged and resumed streams, a Context deadline
 * in a resumption's backoff; and the adaptive hedging delay of a streaming method.
 */
class LongStreamEdgeTest {

    private static final List<String> ALL = IntStream.range(0, LongStreamRig.TOTAL).mapToObj(Integer::toString).toList();

    /** Below the engine: the request(n) each attempt's call was given, by attempt (one list per newCall). */
    static final class DemandRecorder implements ClientInterceptor {
        final List<List<Integer>> perAttempt = new CopyOnWriteArrayList<>();

        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            List<Integer> mine = new CopyOnWriteArrayList<>();
            perAttempt.add(mine);
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                @Override
                public void request(int n) {
                    mine.add(n);
                    super.request(n);
                }
            };
        }

        List<Long> sums() {
            List<Long> out = new ArrayList<>();
            for (List<Integer> l : perAttempt) {
                out.add(l.stream().mapToLong(Integer::longValue).sum());
            }
            return out;
        }
    }

    /**
     * The application asks for 5 once and never again; the first attempt serves 3 and breaks: the resumed attempt must
     * be asked for exactly the 2 not served (docs: "a slow reader is served exactly what it asked for").
     */
    @Test
    void theResumedAttemptIsAskedForExactlyTheDemandNotServed() throws Exception {
        DemandRecorder recorder = new DemandRecorder();
        CountDownLatch fifth = new CountDownLatch(1);
        List<List<Long>> atFifth = new CopyOnWriteArrayList<>();
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(null, 3),
                new OffsetResumption(), a -> {
                    if (a.attempt == 1) {
                        a.sendThenBreak(3);
                    } else {
                        a.send(LongStreamRig.TOTAL); // the rest, stream held open
                    }
                })) {
            ManagedChannel ch = NettyChannelBuilder.forTarget(rig.channel.authority()).usePlaintext()
                    .intercept(recorder, rig.engine).build(); // the engine first, the recorder below it
            try {
                Reader reader = new Reader(5) {
                    @Override
                    void served(int count) {
                        atFifth.add(recorder.sums());
                        fifth.countDown(); // asks for nothing more
                    }
                };
                reader.begin(ch.newCall(Rpc.SERVER_STREAMING, CallOptions.DEFAULT));
                assertThat(fifth.await(LongStreamRig.WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
                assertThat(reader.responses).isEqualTo(ALL.subList(0, 5));
                assertThat(atFifth.get(0)).as("request(n) per attempt below the engine").containsExactly(5L, 2L);
                reader.call.cancel("done", null);
                assertThat(reader.await().getCode()).isEqualTo(Status.Code.CANCELLED);
                assertThat(reader.violations).isEmpty();
                assertThat(reader.responses).isEqualTo(ALL.subList(0, 5));
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * A resumed attempt that fails before any message (a break during the resumption), then one that finishes: every
     * offset once, in order, one set of headers; two resumptions counted, the second backoff from the policy's growth.
     */
    @Test
    void aResumedAttemptThatFailsBeforeAnyMessageIsResumedAgain() throws Exception {
        OffsetResumption resumption = new OffsetResumption();
        try (LongStreamRig rig = new LongStreamRig(Configs.policy(5, 10, 1_000, 4, Status.Code.UNAVAILABLE),
                LongStreamRig.streams(null, 3), resumption, a -> {
                    if (a.attempt == 1) {
                        a.sendThenBreak(3);
                    } else if (a.attempt == 2) {
                        a.sendThenBreak(0); // headers, then the break: no message
                    } else {
                        a.sendThenBreak(LongStreamRig.TOTAL);
                    }
                })) {
            Reader reader = rig.start(new Reader(1), CallOptions.DEFAULT);
            Status status = reader.await();
            assertThat(status.getCode()).as("%s", status).isEqualTo(Status.Code.OK);
            assertThat(reader.responses).isEqualTo(ALL);
            assertThat(reader.headers()).isEqualTo(1);
            assertThat(rig.froms()).containsExactly(0, 3, 3);
            assertThat(rig.startedKinds()).containsExactly(AttemptKind.INITIAL, AttemptKind.RESUME, AttemptKind.RESUME);
            List<RecordingEvents.Event> scheduled = rig.events.ofType("retryScheduled");
            assertThat(scheduled).extracting(RecordingEvents.Event::attempt).containsExactly(2, 3);
            // backoff 10ms x [0.8, 1.2) after progress, then 40ms x [0.8, 1.2) after a break without progress
            assertThat(scheduled.get(0).nanos()).isBetween(TimeUnit.MILLISECONDS.toNanos(8), TimeUnit.MILLISECONDS.toNanos(12));
            assertThat(scheduled.get(1).nanos()).isBetween(TimeUnit.MILLISECONDS.toNanos(32), TimeUnit.MILLISECONDS.toNanos(48));
            assertThat(rig.events.suppressions()).isEmpty();
            assertThat(rig.attemptsMeter(AttemptKind.RESUME)).isEqualTo(2);
            RetryEngineTest.waitFor(() -> rig.events.ofType("callEnded").size() == 1);
            assertThat(rig.events.ofType("attemptEnded")).extracting(RecordingEvents.Event::code)
                    .containsExactly(Status.Code.UNAVAILABLE, Status.Code.UNAVAILABLE, Status.Code.OK);
            assertThat(rig.events.ofType("committed")).hasSize(1);
        }
    }

    /** Breaks without progress use up max-resumes: the call ends with the break's status, counted max_attempts once. */
    @Test
    void resumedAttemptsThatFailWithoutProgressUseUpMaxResumes() throws Exception {
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(null, 2),
                new OffsetResumption(), a -> a.sendThenBreak(a.attempt == 1 ? 3 : 0))) {
            Reader reader = rig.start(new Reader(1), CallOptions.DEFAULT);
            Status status = reader.await();
            assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(reader.responses).isEqualTo(ALL.subList(0, 3));
            assertThat(rig.froms()).containsExactly(0, 3, 3);
            assertThat(rig.events.suppressions()).containsExactly(SuppressionReason.MAX_ATTEMPTS);
            assertThat(rig.suppressedMeter(SuppressionReason.MAX_ATTEMPTS)).isEqualTo(1);
            RetryEngineTest.waitFor(() -> rig.events.ofType("callEnded").size() == 1);
            assertThat(rig.events.ofType("callEnded").get(0).code()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(rig.events.ofType("attemptEnded")).hasSize(3);
        }
    }

    /**
     * A resumer that returns the application's request each time: the resumed stream starts again from 0, and the
     * application is served what the server sent, duplicates included (the engine does not filter; the docs: "where
     * the resumed stream starts is the request's business").
     */
    @Test
    void aResumerReturningTheSameRequestServesTheDuplicatesTheServerSent() throws Exception {
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(null, 2),
                new LongStreamRig.SameRequestResumption(), a -> a.sendThenBreak(3))) {
            Reader reader = rig.start(new Reader(2), CallOptions.DEFAULT);
            Status status = reader.await();
            assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(reader.responses).containsExactly("0", "1", "2", "0", "1", "2", "0", "1", "2");
            assertThat(reader.violations).isEmpty();
            assertThat(reader.headers()).isEqualTo(1);
            assertThat(rig.froms()).containsExactly(0, 0, 0);
            assertThat(rig.events.suppressions()).containsExactly(SuppressionReason.MAX_ATTEMPTS);
        }
    }

    /**
     * A hedged server stream (3 attempts, the first answers) whose committed attempt goes idle after its first
     * message: the call ends UNAVAILABLE "idle for 200ms" (no resumption for hedged methods), every event consistent.
     */
    @Test
    void anIdleCutOfTheCommittedAttemptOfAHedgedStreamEndsTheCallIdle() throws Exception {
        ChannelRetryConfig hedged = Configs.channel(Configs.hedged(Configs.hedging(3, 5_000, Status.Code.UNAVAILABLE)));
        try (LongStreamRig rig = new LongStreamRig(hedged, LongStreamRig.streams(Duration.ofMillis(200), 3),
                new OffsetResumption(), a -> a.send(1))) {
            Reader reader = rig.start(new Reader(1), CallOptions.DEFAULT);
            Status status = reader.await();
            assertThat(status.getCode()).as("%s", status).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(status.getDescription()).isEqualTo("idle for 200ms");
            assertThat(reader.responses).containsExactly("0");
            RetryEngineTest.waitFor(() -> rig.events.ofType("callEnded").size() == 1);
            assertThat(rig.events.ofType("attemptStarted")).hasSize(1);
            assertThat(rig.events.ofType("attemptEnded")).extracting(RecordingEvents.Event::code)
                    .containsExactly(Status.Code.UNAVAILABLE);
            assertThat(rig.events.hedgesPerCall).containsExactly(0);
            assertThat(rig.byAttempt().get(0).cancelled.await(LongStreamRig.WAIT_SECONDS, TimeUnit.SECONDS))
                    .as("the server saw the cut").isTrue();
        }
    }

    /**
     * Adaptive hedging on a hedged server-streaming method: each stream answers at once (headers and a first message:
     * the commit, after which no hedge can go) and then runs for 10 s of the ticker. The delay follows the time to the
     * commit (about 0), not the stream's length (which would make it ~10 s, and for a log tail cancelled after an hour
     * up to the last bucket, 71 minutes).
     */
    @Test
    void theAdaptiveHedgingDelayOfAServerStreamFollowsItsTimeToCommitNotItsLength() throws Exception {
        AtomicLong ticker = new AtomicLong(5_000_000_000L);
        AdaptiveHedgingRegistry registry = new AdaptiveHedgingRegistry(ticker::get);
        String name = "adaptive-stream-" + System.nanoTime();
        Server server = InProcessServerBuilder.forName(name).directExecutor()
                .addService(new SimpleServiceGrpc.SimpleServiceImplBase() {
                    @Override
                    public void serverStreamingRpc(SimpleRequest request,
                            StreamObserver<SimpleResponse> out) {
                        out.onNext(SimpleResponse.newBuilder().setResponseMessage("first").build()); // commits now
                        ticker.addAndGet(TimeUnit.SECONDS.toNanos(10)); // a long stream
                        out.onNext(SimpleResponse.newBuilder().setResponseMessage("last").build());
                        out.onCompleted();
                    }
                }).build().start();
        AdaptiveHedgingPolicy adaptive = new AdaptiveHedgingPolicy(
                0.5, Duration.ofMillis(1), null, 5, Duration.ofSeconds(100));
        ChannelRetryConfig config = Configs.channel(Configs.hedged(Configs.hedging(2, 1, Status.Code.UNAVAILABLE)))
                .withAdaptiveHedging(adaptive);
        try (RetryScheduler scheduler = RetryScheduler.create(1, name)) {
            ManagedChannel ch = InProcessChannelBuilder.forName(name).directExecutor()
                    .intercept(RetryingClientInterceptor.builder(config).scheduler(scheduler).adaptiveHedging(registry)
                            .build()).build();
            try {
                for (int i = 0; i < 5; i++) {
                    Iterator<SimpleResponse> it = ClientCalls.blockingServerStreamingCall(ch,
                            Rpc.SERVER_STREAMING, CallOptions.DEFAULT, Rpc.request("x"));
                    List<String> got = new ArrayList<>();
                    it.forEachRemaining(r -> got.add(r.getResponseMessage()));
                    assertThat(got).containsExactly("first", "last");
                }
                ticker.addAndGet(TimeUnit.SECONDS.toNanos(11)); // an interval later: the window is refreshed
                AdaptiveDelay state = registry.channel("test", adaptive).method(Rpc.SERVER_STREAMING.getFullMethodName());
                long delay = state.delayNanos(TimeUnit.MILLISECONDS.toNanos(1));
                assertThat(state.windowSamples()).isEqualTo(5);
                assertThat(Duration.ofNanos(delay)).as("adapted hedging delay of a stream that commits at once")
                        .isLessThan(Duration.ofSeconds(1));
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * A Context deadline shorter than the resumption's backoff (10 s): the call ends DEADLINE_EXCEEDED at the Context's
     * deadline (docs: "a Context deadline cancels the call then, as it does in any backoff"), with no resumed attempt.
     */
    @Test
    void aContextDeadlineDuringTheResumeBackoffEndsTheCallAtTheDeadline() throws Exception {
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10_000), LongStreamRig.streams(null, 3),
                new OffsetResumption(), a -> a.sendThenBreak(3))) {
            ScheduledExecutorService ses = Executors.newSingleThreadScheduledExecutor();
            Context.CancellableContext ctx = Context.current().withDeadlineAfter(600, TimeUnit.MILLISECONDS, ses);
            try {
                Reader reader;
                Context prev = ctx.attach();
                try {
                    reader = rig.start(new Reader(1), CallOptions.DEFAULT);
                } finally {
                    ctx.detach(prev);
                }
                Status status = reader.await();
                assertThat(status.getCode()).as("%s", status).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
                // at the Context's deadline (600 ms after it was made, a little before the call started), well before
                // the 10 s backoff
                assertThat(reader.elapsedMillis()).isBetween(300L, 5_000L);
                assertThat(reader.responses).isEqualTo(ALL.subList(0, 3));
                assertThat(rig.froms()).containsExactly(0);
                RetryEngineTest.waitFor(() -> rig.events.ofType("callEnded").size() == 1);
                assertThat(rig.events.ofType("callEnded").get(0).code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
            } finally {
                ctx.cancel(null);
                ses.shutdownNow();
            }
        }
    }

    /**
     * Idle cut of a committed server stream, then resumption: the cut attempt ends UNAVAILABLE "idle for 200ms" in the
     * events, the resumed attempt serves the rest from the right offset, and the application's demand (batch 4) is
     * exactly met.
     */
    @Test
    void anIdleCutThenResumptionWithABatchReader() throws Exception {
        DemandRecorder recorder = new DemandRecorder();
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(Duration.ofMillis(200), 3),
                new OffsetResumption(), a -> {
                    if (a.attempt == 1) {
                        a.send(3); // then silent, stream open
                    } else {
                        a.sendThenBreak(LongStreamRig.TOTAL);
                    }
                })) {
            ManagedChannel ch = NettyChannelBuilder.forTarget(rig.channel.authority()).usePlaintext()
                    .intercept(recorder, rig.engine).build();
            try {
                RetryEngineTest.waitFor(() -> ch.getState(true) == ConnectivityState.READY);
                Reader reader = new Reader(4);
                reader.begin(ch.newCall(Rpc.SERVER_STREAMING, CallOptions.DEFAULT));
                Status status = reader.await();
                assertThat(status.getCode()).as("%s", status).isEqualTo(Status.Code.OK);
                assertThat(reader.responses).isEqualTo(ALL);
                assertThat(reader.violations).isEmpty();
                assertThat(rig.froms()).containsExactly(0, 3);
                assertThat(rig.byAttempt().get(0).cancelled.await(LongStreamRig.WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
                RetryEngineTest.waitFor(() -> rig.events.ofType("callEnded").size() == 1);
                assertThat(rig.events.ofType("attemptEnded")).extracting(RecordingEvents.Event::code)
                        .containsExactly(Status.Code.UNAVAILABLE, Status.Code.OK);
                assertThat(rig.startedKinds()).containsExactly(AttemptKind.INITIAL, AttemptKind.RESUME);
                // asked 4 (got 3: 1 outstanding), then 4 more at "3", 4 more at "7": the resumed attempt 1 + 4 + 4
                assertThat(recorder.perAttempt.get(1)).as("resumed attempt's request(n)s").containsExactly(1, 4, 4);
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}
