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

    private SimpleServiceGrpc.SimpleServiceBlockingStub stub(DeadlineSettings settings, ServiceConfig serviceConfig) {
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
        stub(DeadlineSettings.NONE, null).unaryRpc(req());
        assertThat(seenMs()).isNull();
        assertThat(events.remaining).isEmpty();
    }

    @Test
    void defaultTimeoutGoesOnlyToCallsWithoutADeadline() {
        var stub = stub(DeadlineSettings.NONE.withDefaultTimeout(Duration.ofMillis(1500)), null);

        stub.unaryRpc(req());
        assertThat(seenMs()).isBetween(1000L, 1500L);

        server.reset();
        stub.withDeadlineAfter(5, TimeUnit.SECONDS).unaryRpc(req());
        assertThat(seenMs()).as("explicit longer deadline kept, not shortened to the default").isBetween(4500L, 5000L);

        server.reset();
        stub.withDeadlineAfter(300, TimeUnit.MILLISECONDS).unaryRpc(req());
        assertThat(seenMs()).isBetween(100L, 300L);

        server.reset();
        inContextWithDeadline(4000, () -> stub.unaryRpc(req()));
        assertThat(seenMs()).as("inherited deadline kept, not replaced by the default").isBetween(3500L, 4000L);
    }

    @Test
    void reserveShortensOnlyAnInheritedDeadline() {
        var stub = stub(DeadlineSettings.NONE.withReserve(Duration.ofMillis(400)), null);

        inContextWithDeadline(2000, () -> stub.unaryRpc(req()));
        assertThat(seenMs()).isBetween(1300L, 1600L);

        server.reset();
        stub.withDeadlineAfter(2000, TimeUnit.MILLISECONDS).unaryRpc(req());
        assertThat(seenMs()).as("an explicit deadline is not reserved").isBetween(1700L, 2000L);
    }

    @Test
    void explicitShorterStubDeadlineWinsOverTheInheritedOne() {
        var stub = stub(DeadlineSettings.NONE.withReserve(Duration.ofMillis(200)), null);
        inContextWithDeadline(3000, () -> stub.withDeadlineAfter(500, TimeUnit.MILLISECONDS).unaryRpc(req()));
        // explicit 500 ms is earlier than inherited 3000 - 200: kept as is, no reserve taken off it
        assertThat(seenMs()).isBetween(350L, 500L);
    }

    @Test
    void explicitLongerStubDeadlineIsCutToTheInheritedOneMinusReserve() {
        var stub = stub(DeadlineSettings.NONE.withReserve(Duration.ofMillis(200)), null);
        inContextWithDeadline(1000, () -> stub.withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(req()));
        assertThat(seenMs()).isBetween(600L, 800L);
    }

    @Test
    void defaultTimeoutNeverWidensAnything() {
        var stub = stub(new DeadlineSettings(Duration.ofSeconds(30), Duration.ZERO, Duration.ZERO), null);
        inContextWithDeadline(800, () -> stub.unaryRpc(req()));
        assertThat(seenMs()).isBetween(600L, 800L);
    }

    @Test
    void methodTimeoutCapsAndWinsOverTheDefault() {
        ServiceConfig config = new ServiceConfig(List.of(new MethodConfig(
                List.of(MethodName.of("grpc.testing.SimpleService", "UnaryRpc")), null, Duration.ofMillis(700),
                null, null, null, null)), null);
        var stub = stub(DeadlineSettings.NONE.withDefaultTimeout(Duration.ofSeconds(5)), config);

        stub.unaryRpc(req());
        assertThat(seenMs()).as("method timeout instead of the default").isBetween(500L, 700L);

        server.reset();
        stub.withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(req());
        assertThat(seenMs()).as("method timeout caps a longer explicit deadline (gRPC rule)").isBetween(500L, 700L);

        server.reset();
        stub.withDeadlineAfter(300, TimeUnit.MILLISECONDS).unaryRpc(req());
        assertThat(seenMs()).as("a shorter explicit deadline wins").isBetween(100L, 300L);

        server.reset();
        stub.serverStreamingRpc(req()).forEachRemaining(r -> { });
        assertThat(seenMs()).as("other methods get the default").isBetween(4500L, 5000L);
    }

    @Test
    void minRemainingFailsAtOnceWithoutSending() {
        var stub = stub(DeadlineSettings.NONE.withMinRemaining(Duration.ofMillis(300)), null);

        long start = System.nanoTime();
        assertThatThrownBy(() -> stub.withDeadlineAfter(200, TimeUnit.MILLISECONDS).unaryRpc(req()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
                    assertThat(e.getStatus().getDescription()).contains("min-remaining").contains("not sent");
                });
        long elapsedMs = (System.nanoTime() - start) / MS;
        assertThat(elapsedMs).as("failed at once, long before the deadline").isLessThan(150);
        assertThat(server.arrivalCount()).as("the server never sees it").isZero();
        assertThat(events.fastFails.get()).isEqualTo(1);
        assertThat(events.targets).contains(new CallTarget("inventory", "grpc.testing.SimpleService/UnaryRpc"));

        // inherited deadline below the floor: refused too
        assertThatThrownBy(() -> inContextWithDeadline(100, () -> stub.unaryRpc(req())))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
        assertThat(server.arrivalCount()).isZero();
        assertThat(events.fastFails.get()).isEqualTo(2);

        // enough time: sent
        stub.withDeadlineAfter(2, TimeUnit.SECONDS).unaryRpc(req());
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(events.fastFails.get()).isEqualTo(2);
        // calls without any deadline are not refused
        stub.unaryRpc(req());
        assertThat(server.arrivalCount()).isEqualTo(2);
    }

    @Test
    void minRemainingCountsTheReserve() {
        // inherited 500 ms - reserve 300 ms = 200 ms left < floor 250 ms: refused
        var stub = stub(new DeadlineSettings(null, Duration.ofMillis(300), Duration.ofMillis(250)), null);
        assertThatThrownBy(() -> inContextWithDeadline(500, () -> stub.unaryRpc(req())))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
        assertThat(server.arrivalCount()).isZero();
    }

    @Test
    void fastFailOfAnAsyncCallClosesTheListenerOnAnotherThread() throws Exception {
        ManagedChannel channel = InProcessChannelBuilder.forName(server.inProcessName())
                .intercept(new DeadlineClientInterceptor("inventory",
                        DeadlineSettings.NONE.withMinRemaining(Duration.ofMillis(500)), null, events))
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
        var stub = stub(DeadlineSettings.NONE, null);
        stub.withDeadlineAfter(1, TimeUnit.SECONDS).unaryRpc(req());
        stub.unaryRpc(req());
        assertThat(events.remaining).hasSize(1);
        assertThat(events.remaining.get(0) / MS).isBetween(800L, 1000L);
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
