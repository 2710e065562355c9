package io.github.grpcretry.deadline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The client rules against a real (in-process) server that records the deadline it sees. */
class DeadlineClientInterceptorTest {

    private static final long MS = 1_000_000L;
    private static ScriptedServer server;
    private static ScheduledExecutorService scheduler;
    private final List<ManagedChannel> channels = new CopyOnWriteArrayList<>();
    private final RecordingListener events = new RecordingListener();

    @BeforeAll
    static void startServer() throws Exception {
        server = ScriptedServer.start("deadline-client-rules");
        scheduler = Executors.newSingleThreadScheduledExecutor();
    }

    @AfterAll
    static void stopServer() {
        server.close();
        scheduler.shutdownNow();
    }

    @BeforeEach
    void reset() {
        server.reset();
        server.script(a -> ScriptedServer.Action.ok());
    }

    @AfterEach
    void closeChannels() {
        channels.forEach(ManagedChannel::shutdownNow);
    }

    private SimpleServiceGrpc.SimpleServiceBlockingStub stub(DeadlineClientInterceptor.Settings settings, ServiceConfig serviceConfig) {
        ManagedChannel channel = InProcessChannelBuilder.forName(server.inProcessName())
                .intercept(new DeadlineClientInterceptor("inventory", settings,
                        DeadlineClientInterceptor.methodTimeouts(serviceConfig), events))
                .build();
        channels.add(channel);
        return SimpleServiceGrpc.newBlockingStub(channel);
    }

    private static SimpleRequest req() {
        return SimpleRequest.newBuilder().setRequestMessage("x").build();
    }

    private static Long seenMs() {
        Long nanos = server.arrivals().get(0).deadlineRemainingNanos;
        return nanos == null ? null : nanos / MS;
    }

    /** Runs {@code body} in a Context whose deadline is {@code ms} from now (an inherited deadline). */
    private static <T> T inContextWithDeadline(long ms, java.util.function.Supplier<T> body) {
        Context.CancellableContext ctx = Context.current().withDeadlineAfter(ms, TimeUnit.MILLISECONDS, scheduler);
        try {
            return ctx.supply(body);
        } finally {
            ctx.cancel(null);
        }
    }

    @Test
    void noRulesChangeNothing() {
        stub(DeadlineClientInterceptor.Settings.NONE, null).unaryRpc(req());
        assertThat(seenMs()).isNull();
        assertThat(events.remaining).isEmpty();
    }

    /**
     * Makes the call in {@code call} and asserts the deadline the server saw: at most {@code expectedMs}
     * left (the deadline was set during the call, and time only passes), at least that less the call's
     * own duration (and 1 ms for the grpc-timeout header's sub-microsecond rounding). Exact however long
     * the call took; a rule that picked another deadline shows unless the call took longer than the
     * difference.
     */
    private static void assertSeen(long expectedMs, Runnable call, String what) {
        server.reset();
        long before = System.nanoTime();
        call.run();
        long took = System.nanoTime() - before;
        Long remaining = server.arrivals().get(0).deadlineRemainingNanos;
        assertThat(remaining).as("%s: ns left at the server, the call having taken %d ns", what, took).isNotNull()
                .isBetween(expectedMs * MS - took - MS, expectedMs * MS);
    }

    @Test
    void defaultTimeoutGoesOnlyToCallsWithoutADeadline() {
        var stub = stub(DeadlineClientInterceptor.Settings.NONE.withDefaultTimeout(Duration.ofMillis(1500)), null);
        assertSeen(1500, () -> stub.unaryRpc(req()), "the default");
        assertSeen(5000, () -> stub.withDeadlineAfter(5, TimeUnit.SECONDS).unaryRpc(req()),
                "explicit longer deadline kept, not shortened to the default");
        assertSeen(300, () -> stub.withDeadlineAfter(300, TimeUnit.MILLISECONDS).unaryRpc(req()), "explicit shorter");
        assertSeen(4000, () -> inContextWithDeadline(4000, () -> stub.unaryRpc(req())),
                "inherited deadline kept, not replaced by the default");
    }

    @Test
    void reserveShortensOnlyAnInheritedDeadline() {
        var stub = stub(DeadlineClientInterceptor.Settings.NONE.withReserve(Duration.ofMillis(400)), null);
        assertSeen(1600, () -> inContextWithDeadline(2000, () -> stub.unaryRpc(req())), "inherited less the reserve");
        assertSeen(2000, () -> stub.withDeadlineAfter(2000, TimeUnit.MILLISECONDS).unaryRpc(req()),
                "an explicit deadline is not reserved");
    }

    @Test
    void explicitShorterStubDeadlineWinsOverTheInheritedOne() {
        var stub = stub(DeadlineClientInterceptor.Settings.NONE.withReserve(Duration.ofMillis(200)), null);
        // explicit 500 ms is earlier than inherited 3000 - 200: kept as is, no reserve taken off it
        assertSeen(500, () -> inContextWithDeadline(3000,
                () -> stub.withDeadlineAfter(500, TimeUnit.MILLISECONDS).unaryRpc(req())), "the explicit deadline");
    }

    @Test
    void explicitLongerStubDeadlineIsCutToTheInheritedOneMinusReserve() {
        var stub = stub(DeadlineClientInterceptor.Settings.NONE.withReserve(Duration.ofMillis(200)), null);
        assertSeen(800, () -> inContextWithDeadline(1000,
                () -> stub.withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(req())), "inherited less the reserve");
    }

    @Test
    void defaultTimeoutNeverWidensAnything() {
        var stub = stub(new DeadlineClientInterceptor.Settings(Duration.ofSeconds(30), Duration.ZERO, Duration.ZERO), null);
        assertSeen(800, () -> inContextWithDeadline(800, () -> stub.unaryRpc(req())), "the inherited deadline");
    }

    @Test
    void methodTimeoutCapsAndWinsOverTheDefault() {
        ServiceConfig config = new ServiceConfig(List.of(new MethodConfig(
                List.of(MethodName.of("grpc.testing.SimpleService", "UnaryRpc")), null, Duration.ofMillis(700),
                null, null, null, null)), null);
        var stub = stub(DeadlineClientInterceptor.Settings.NONE.withDefaultTimeout(Duration.ofSeconds(5)), config);
        assertSeen(700, () -> stub.unaryRpc(req()), "method timeout instead of the default");
        assertSeen(700, () -> stub.withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(req()),
                "method timeout caps a longer explicit deadline (gRPC rule)");
        assertSeen(300, () -> stub.withDeadlineAfter(300, TimeUnit.MILLISECONDS).unaryRpc(req()),
                "a shorter explicit deadline wins");
        assertSeen(5000, () -> stub.serverStreamingRpc(req()).forEachRemaining(r -> { }),
                "other methods get the default");
    }

    @Test
    void minRemainingFailsAtOnceWithoutSending() {
        var stub = stub(DeadlineClientInterceptor.Settings.NONE.withMinRemaining(Duration.ofMillis(3000)), null);

        long start = System.nanoTime();
        assertThatThrownBy(() -> stub.withDeadlineAfter(2000, TimeUnit.MILLISECONDS).unaryRpc(req()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
                    assertThat(e.getStatus().getDescription()).contains("min-remaining").contains("not sent");
                });
        long elapsedMs = (System.nanoTime() - start) / MS;
        assertThat(elapsedMs).as("failed at once, a second or more before the 2 s deadline").isLessThan(1000);
        assertThat(server.arrivalCount()).as("the server never sees it").isZero();
        assertThat(events.fastFails.get()).isEqualTo(1);
        assertThat(events.targets).contains(new CallTarget("inventory", "grpc.testing.SimpleService/UnaryRpc"));

        // inherited deadline below the floor: refused too
        assertThatThrownBy(() -> inContextWithDeadline(1000, () -> stub.unaryRpc(req())))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
        assertThat(server.arrivalCount()).isZero();
        assertThat(events.fastFails.get()).isEqualTo(2);

        // enough time: sent
        stub.withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(req());
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(events.fastFails.get()).isEqualTo(2);
        // calls without any deadline are not refused
        stub.unaryRpc(req());
        assertThat(server.arrivalCount()).isEqualTo(2);
    }

    @Test
    void minRemainingCountsTheReserve() {
        // inherited 500 ms - reserve 300 ms = 200 ms left < floor 250 ms: refused
        var stub = stub(new DeadlineClientInterceptor.Settings(null, Duration.ofMillis(300), Duration.ofMillis(250)), null);
        assertThatThrownBy(() -> inContextWithDeadline(500, () -> stub.unaryRpc(req())))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
        assertThat(server.arrivalCount()).isZero();
    }

    @Test
    void fastFailOfAnAsyncCallClosesTheListenerOnAnotherThread() throws Exception {
        ManagedChannel channel = InProcessChannelBuilder.forName(server.inProcessName())
                .intercept(new DeadlineClientInterceptor("inventory",
                        DeadlineClientInterceptor.Settings.NONE.withMinRemaining(Duration.ofMillis(500)), null, events))
                .build();
        channels.add(channel);
        CompletableFuture<Status> closed = new CompletableFuture<>();
        Thread caller = Thread.currentThread();
        CompletableFuture<Thread> callbackThread = new CompletableFuture<>();
        SimpleServiceGrpc.newStub(channel).withDeadlineAfter(100, TimeUnit.MILLISECONDS)
                .unaryRpc(req(), new StreamObserver<>() {
                    @Override
                    public void onNext(SimpleResponse value) {
                        closed.complete(Status.OK);
                    }

                    @Override
                    public void onError(Throwable t) {
                        callbackThread.complete(Thread.currentThread());
                        closed.complete(Status.fromThrowable(t));
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
        assertThat(closed.get(2, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(callbackThread.get()).isNotSameAs(caller);
        assertThat(server.arrivalCount()).isZero();
    }

    @Test
    void remainingIsReportedForCallsWithADeadline() {
        var stub = stub(DeadlineClientInterceptor.Settings.NONE, null);
        long before = System.nanoTime();
        stub.withDeadlineAfter(1, TimeUnit.SECONDS).unaryRpc(req());
        long took = System.nanoTime() - before;
        stub.unaryRpc(req());
        assertThat(events.remaining).hasSize(1);
        // read when the call started, after the deadline was set: at most 1 s, less at most the call's duration
        assertThat(events.remaining.get(0)).isBetween(1000 * MS - took, 1000 * MS);
    }

    static final class RecordingListener implements DeadlineEventListener {
        final List<Long> remaining = new CopyOnWriteArrayList<>();
        final List<CallTarget> targets = new CopyOnWriteArrayList<>();
        final AtomicInteger fastFails = new AtomicInteger();

        @Override
        public void deadlineRemaining(CallTarget target, long remainingNanos) {
            targets.add(target);
            remaining.add(remainingNanos);
        }

        @Override
        public void fastFail(CallTarget target) {
            fastFails.incrementAndGet();
        }
    }
}
