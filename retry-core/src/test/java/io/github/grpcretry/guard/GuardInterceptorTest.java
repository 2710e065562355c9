package io.github.grpcretry.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.attempt.GrpcRetryCallOptions;
import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.attempt.SuppressionReason;
import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.deadline.GrpcContextPropagation;
import io.github.grpcretry.metrics.MicrometerRetryEventListener;
import io.github.grpcretry.metrics.RetryMeterNames;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.internal.pushback.Pushback;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.grpc.Channel;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The guard between real in-process servers: a client calls the middle service B (guard server
 * interceptor), whose handler calls the scripted service C through a channel with the retry engine
 * and, outside it, the guard client interceptor.
 */
class GuardInterceptorTest {

    private static final String SERVICE = "grpc.testing.SimpleService";
    private static final String UNARY = SERVICE + "/UnaryRpc";
    private static RetryScheduler scheduler;
    private static ExecutorService pool;

    private final List<AutoCloseable> closeables = new java.util.ArrayList<>();
    private final ConcurrentLinkedQueue<String> guardEvents = new ConcurrentLinkedQueue<>();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final GuardEventListener events = new GuardEventListener() {
        private final GuardEventListener guardMeters = MicrometerRetryEventListener.guardMeters(meters);

        @Override
        public void inboundMarked(String inboundMethod, String downstreamMethod, Status.Code code) {
            guardEvents.add("marked " + inboundMethod + " by " + downstreamMethod + " " + code);
        }

        @Override
        public void responseGuarded(String fullMethodName, Status.Code code) {
            guardEvents.add("guarded " + fullMethodName + " " + code);
            guardMeters.responseGuarded(fullMethodName, code);
        }
    };
    private ScriptedServer c;

    @BeforeAll
    static void startScheduler() {
        scheduler = RetryScheduler.create(1, "guard-test");
        pool = Executors.newFixedThreadPool(2);
    }

    @AfterAll
    static void stopScheduler() {
        scheduler.close();
        pool.shutdownNow();
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable a : closeables) {
            a.close();
        }
        if (c != null) {
            c.close();
        }
    }

    /** What B's handler does with C's stub (runs in B's inbound Context). */
    interface Handler {
        SimpleResponse handle(SimpleServiceGrpc.SimpleServiceBlockingStub toC) throws Exception;
    }

    static RetryPolicy policy(int maxAttempts, Status.Code... codes) {
        return new RetryPolicy(maxAttempts, Duration.ofMillis(1), Duration.ofMillis(5), 2, Set.of(codes), null);
    }

    static ChannelRetryConfig config(RetryPolicy policy, RetryBudgetPolicy budget) {
        ServiceConfig sc = policy == null ? ServiceConfig.EMPTY
                : new ServiceConfig(List.of(new MethodConfig(List.of(MethodName.of(SERVICE, null)), null, null, null,
                        null, policy, null)), null);
        return ChannelRetryConfig.of("c", sc.capped(5)).withBudget(budget);
    }

    /** C's channel as B has it: the engine inside, the guard outside. */
    private ManagedChannel channelToC(ChannelRetryConfig config, boolean nativeEngine, RetryEventListener engineEvents) {
        InProcessChannelBuilder b = InProcessChannelBuilder.forName(c.inProcessName());
        if (nativeEngine) {
            b.defaultServiceConfig(config.serviceConfig().toServiceConfigMap(true)).enableRetry().maxRetryAttempts(5);
        } else {
            b.defaultServiceConfig(config.serviceConfig().toServiceConfigMap(false))
                    .intercept(RetryingClientInterceptor.builder(config)
                            .budget(config.budget() == null ? null : new RetryBudget(config.budget()))
                            .eventListener(engineEvents).scheduler(scheduler).build());
        }
        b.intercept(new GuardClientInterceptor(config, events)); // added last: runs first, outside the engine
        ManagedChannel ch = b.build();
        closeables.add(() -> {
            ch.shutdownNow();
            ch.awaitTermination(5, TimeUnit.SECONDS);
        });
        return ch;
    }

    /** Starts B (guard server interceptor, handler calling C on {@code toC}) and returns a plain channel to it. */
    private ManagedChannel startB(Channel toC, Handler handler) throws Exception {
        String name = "guard-b-" + UUID.randomUUID();
        SimpleServiceGrpc.SimpleServiceImplBase impl = new SimpleServiceGrpc.SimpleServiceImplBase() {
            @Override
            public void unaryRpc(SimpleRequest request, StreamObserver<SimpleResponse> observer) {
                SimpleResponse response;
                try {
                    response = handler.handle(SimpleServiceGrpc.newBlockingStub(toC).withDeadlineAfter(5, TimeUnit.SECONDS));
                } catch (StatusRuntimeException e) {
                    observer.onError(e.getStatus().asRuntimeException()); // C's status, not its trailers
                    return;
                } catch (RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    observer.onError(Status.INTERNAL.withCause(e).asRuntimeException());
                    return;
                }
                observer.onNext(response);
                observer.onCompleted();
            }
        };
        Server server = InProcessServerBuilder.forName(name)
                .addService(ServerInterceptors.intercept(impl, new GuardServerInterceptor(events)))
                .build().start();
        ManagedChannel ch = InProcessChannelBuilder.forName(name).build();
        closeables.add(() -> {
            ch.shutdownNow();
            server.shutdownNow();
            server.awaitTermination(5, TimeUnit.SECONDS);
        });
        return ch;
    }

    private static SimpleRequest req() {
        return SimpleRequest.newBuilder().setRequestMessage("x").build();
    }

    /** Calls B once; the status and trailers its client sees. */
    private static StatusRuntimeException callFails(Channel b) {
        try {
            SimpleServiceGrpc.newBlockingStub(b).withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(req());
        } catch (StatusRuntimeException e) {
            return e;
        }
        throw new AssertionError("B answered OK");
    }

    private static String pushback(StatusRuntimeException e) {
        Metadata t = e.getTrailers();
        return t == null ? null : t.get(Pushback.KEY);
    }

    private double guardCount() {
        var c = meters.find(RetryMeterNames.SERVER_GUARD).tag(RetryMeterNames.TAG_METHOD, UNARY).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void retriesUsedUpDownstreamMakeTheFailedResponseSayStop() throws Exception {
        c = ScriptedServer.start("guard-c-" + UUID.randomUUID()).script(a -> Action.fail(Status.Code.UNAVAILABLE));
        ManagedChannel toC = channelToC(config(policy(3, Status.Code.UNAVAILABLE), null), false, RetryEventListener.NOOP);
        ManagedChannel b = startB(toC, stub -> stub.unaryRpc(req()));

        StatusRuntimeException e = callFails(b);
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(pushback(e)).isEqualTo("-1");
        assertThat(c.arrivalCount()).as("B's engine used its 3 attempts").isEqualTo(3);
        assertThat(guardEvents).containsExactly("marked " + UNARY + " by " + UNARY + " UNAVAILABLE",
                "guarded " + UNARY + " UNAVAILABLE");
        assertThat(guardCount()).isEqualTo(1.0);
    }

    @Test
    void aNonRetryableDownstreamFailureDoesNotMark() throws Exception {
        c = ScriptedServer.start("guard-c-" + UUID.randomUUID()).script(a -> Action.fail(Status.Code.INVALID_ARGUMENT));
        ManagedChannel toC = channelToC(config(policy(3, Status.Code.UNAVAILABLE), null), false, RetryEventListener.NOOP);
        ManagedChannel b = startB(toC, stub -> stub.unaryRpc(req()));

        StatusRuntimeException e = callFails(b);
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(pushback(e)).isNull();
        assertThat(guardEvents).isEmpty();
        assertThat(guardCount()).isZero();
    }

    @Test
    void aMethodWithoutRetriesDoesNotMarkSoTheLayerAboveRetries() throws Exception {
        c = ScriptedServer.start("guard-c-" + UUID.randomUUID()).script(a -> Action.fail(Status.Code.UNAVAILABLE));
        ManagedChannel toC = channelToC(config(null, null), false, RetryEventListener.NOOP);
        ManagedChannel b = startB(toC, stub -> stub.unaryRpc(req()));
        assertThat(pushback(callFails(b))).isNull();

        // a retry policy of one attempt has no retries either
        ManagedChannel toC1 = channelToC(config(policy(1, Status.Code.UNAVAILABLE), null), false, RetryEventListener.NOOP);
        ManagedChannel b1 = startB(toC1, stub -> stub.unaryRpc(req()));
        assertThat(pushback(callFails(b1))).isNull();
        assertThat(guardEvents).isEmpty();
    }

    @Test
    void aStopFromFurtherDownIsPassedOnEvenWithoutRetriesHere() throws Exception {
        c = ScriptedServer.start("guard-c-" + UUID.randomUUID())
                .script(a -> Action.fail(Status.Code.INTERNAL).pushback("-1"));
        ManagedChannel toC = channelToC(config(null, null), false, RetryEventListener.NOOP);
        ManagedChannel b = startB(toC, stub -> stub.unaryRpc(req()));

        StatusRuntimeException e = callFails(b);
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
        assertThat(pushback(e)).isEqualTo("-1");
        assertThat(guardEvents).contains("marked " + UNARY + " by " + UNARY + " INTERNAL");
    }

    @Test
    void aMarkedCallThatEndsOkIsLeftAlone() throws Exception {
        c = ScriptedServer.start("guard-c-" + UUID.randomUUID()).script(a -> Action.fail(Status.Code.UNAVAILABLE));
        ManagedChannel toC = channelToC(config(policy(2, Status.Code.UNAVAILABLE), null), false, RetryEventListener.NOOP);
        AtomicReference<Boolean> markedSeen = new AtomicReference<>();
        ManagedChannel b = startB(toC, stub -> {
            try {
                return stub.unaryRpc(req());
            } catch (StatusRuntimeException fallback) {
                markedSeen.set(GuardMarker.current().isMarked());
                return SimpleResponse.newBuilder().setResponseMessage("cached").build();
            }
        });
        AtomicReference<Metadata> trailers = new AtomicReference<>();
        SimpleResponse r = SimpleServiceGrpc.newBlockingStub(b)
                .withInterceptors(io.grpc.stub.MetadataUtils.newCaptureMetadataInterceptor(new AtomicReference<>(), trailers))
                .unaryRpc(req());
        assertThat(r.getResponseMessage()).isEqualTo("cached");
        assertThat(markedSeen.get()).as("the handler sees its call marked when C's failure reaches it").isTrue();
        assertThat(trailers.get().get(Pushback.KEY)).isNull();
        assertThat(guardEvents).noneMatch(s -> s.startsWith("guarded"));
        assertThat(guardCount()).isZero();
    }

    @Test
    void theDownstreamCallMayRunOnAnotherThreadCarryingTheContext() throws Exception {
        c = ScriptedServer.start("guard-c-" + UUID.randomUUID()).script(a -> Action.fail(Status.Code.UNAVAILABLE));
        ManagedChannel toC = channelToC(config(policy(2, Status.Code.UNAVAILABLE), null), false, RetryEventListener.NOOP);
        var propagating = GrpcContextPropagation.wrap((java.util.concurrent.Executor) pool);
        ManagedChannel b = startB(toC, stub -> {
            java.util.concurrent.CompletableFuture<SimpleResponse> f = new java.util.concurrent.CompletableFuture<>();
            propagating.execute(() -> {
                try {
                    f.complete(stub.unaryRpc(req()));
                } catch (RuntimeException e) {
                    f.completeExceptionally(e);
                }
            });
            try {
                return f.get(10, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                throw (RuntimeException) e.getCause();
            }
        });
        assertThat(pushback(callFails(b))).isEqualTo("-1");

        // the same on a thread that does not carry the Context: nothing can be marked
        ManagedChannel bare = startB(toC, stub -> {
            java.util.concurrent.Future<SimpleResponse> f = pool.submit(() -> stub.unaryRpc(req()));
            try {
                return f.get(10, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                throw (RuntimeException) e.getCause();
            }
        });
        assertThat(pushback(callFails(bare))).isNull();
    }

    @Test
    void exceptionEscapingAMarkedHandlerStillCarriesTheStop() throws Exception {
        c = ScriptedServer.start("guard-c-" + UUID.randomUUID()).script(a -> Action.fail(Status.Code.UNAVAILABLE));
        ManagedChannel toC = channelToC(config(policy(2, Status.Code.UNAVAILABLE), null), false, RetryEventListener.NOOP);
        ManagedChannel b = startB(toC, stub -> {
            try {
                return stub.unaryRpc(req());
            } catch (StatusRuntimeException e) {
                throw new IllegalStateException("inventory unavailable", e); // escapes the handler
            }
        });
        StatusRuntimeException e = callFails(b);
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN);
        assertThat(pushback(e)).isEqualTo("-1");
        assertThat(guardCount()).isEqualTo(1.0);
    }

    @Test
    void aRetrySuppressedByTheBudgetMarksAsWell() throws Exception {
        c = ScriptedServer.start("guard-c-" + UUID.randomUUID()).script(a -> Action.fail(Status.Code.UNAVAILABLE));
        ConcurrentLinkedQueue<SuppressionReason> suppressed = new ConcurrentLinkedQueue<>();
        RetryEventListener engineEvents = new RetryEventListener() {
            @Override
            public void retrySuppressed(CallTarget target, SuppressionReason reason, Status.Code code) {
                suppressed.add(reason);
            }
        };
        ManagedChannel toC = channelToC(config(policy(3, Status.Code.UNAVAILABLE),
                new RetryBudgetPolicy(0.0, 0, Duration.ofSeconds(10))), false, engineEvents);
        ManagedChannel b = startB(toC, stub -> stub.unaryRpc(req()));
        assertThat(pushback(callFails(b))).isEqualTo("-1");
        assertThat(c.arrivalCount()).isEqualTo(1);
        assertThat(suppressed).containsExactly(SuppressionReason.BUDGET);
    }

    @Test
    void aDownstreamClientOnGrpcJavasOwnRetryMarksToo() throws Exception {
        c = ScriptedServer.start("guard-c-" + UUID.randomUUID()).script(a -> Action.fail(Status.Code.UNAVAILABLE));
        ManagedChannel toC = channelToC(config(policy(3, Status.Code.UNAVAILABLE), null), true, RetryEventListener.NOOP);
        ManagedChannel b = startB(toC, stub -> stub.unaryRpc(req()));
        assertThat(pushback(callFails(b))).isEqualTo("-1");
        assertThat(c.arrivalCount()).as("grpc-java's retries").isEqualTo(3);
    }

    @Test
    void theEngineAboveStopsRetryingAGuardedResponse() throws Exception {
        c = ScriptedServer.start("guard-c-" + UUID.randomUUID()).script(a -> Action.fail(Status.Code.UNAVAILABLE));
        ManagedChannel toC = channelToC(config(policy(3, Status.Code.UNAVAILABLE), null), false, RetryEventListener.NOOP);
        ManagedChannel b = startB(toC, stub -> stub.unaryRpc(req()));
        ConcurrentLinkedQueue<SuppressionReason> suppressed = new ConcurrentLinkedQueue<>();
        ClientInterceptor engineA = RetryingClientInterceptor.builder(config(policy(3, Status.Code.UNAVAILABLE), null))
                .scheduler(scheduler)
                .eventListener(new RetryEventListener() {
                    @Override
                    public void retrySuppressed(CallTarget target, SuppressionReason reason, Status.Code code) {
                        suppressed.add(reason);
                    }
                }).build();
        StatusRuntimeException e = callFails(io.grpc.ClientInterceptors.intercept(b, engineA));
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(c.arrivalCount()).as("one call to B, three attempts from B to C").isEqualTo(3);
        assertThat(suppressed).containsExactly(SuppressionReason.PUSHBACK);
    }

    @Test
    void aCallOutsideAnyGuardedInboundCallIsNotWrapped() throws Exception {
        c = ScriptedServer.start("guard-c-" + UUID.randomUUID()).script(a -> Action.fail(Status.Code.UNAVAILABLE));
        ManagedChannel plain = InProcessChannelBuilder.forName(c.inProcessName()).build();
        closeables.add(plain::shutdownNow);
        GuardClientInterceptor guard = new GuardClientInterceptor(config(policy(3, Status.Code.UNAVAILABLE), null), events);
        io.grpc.ClientCall<SimpleRequest, SimpleResponse> call =
                guard.interceptCall(SimpleServiceGrpc.getUnaryRpcMethod(), io.grpc.CallOptions.DEFAULT, plain);
        assertThat(call.getClass().getName()).doesNotContain("GuardClientInterceptor");
        call.cancel("not needed", null);

        GuardMarker marker = new GuardMarker(UNARY);
        io.grpc.Context withMarker = io.grpc.Context.current().withValue(GuardMarker.CONTEXT_KEY, marker);
        assertThatThrownBy(() -> withMarker.call(() -> SimpleServiceGrpc.newBlockingStub(
                io.grpc.ClientInterceptors.intercept(plain, guard)).unaryRpc(req())))
                .isInstanceOf(StatusRuntimeException.class);
        assertThat(marker.isMarked()).isTrue();
        assertThatThrownBy(() -> SimpleServiceGrpc.newBlockingStub(io.grpc.ClientInterceptors.intercept(plain, guard))
                .unaryRpc(req())).isInstanceOf(StatusRuntimeException.class);
        assertThat(guardEvents).containsExactly("marked " + UNARY + " by " + UNARY + " UNAVAILABLE");
    }

    @Test
    void theRule() {
        RetryPolicy p = policy(3, Status.Code.UNAVAILABLE, Status.Code.RESOURCE_EXHAUSTED);
        Metadata none = new Metadata();
        Metadata stop = new Metadata();
        stop.put(Pushback.KEY, "-1");
        Metadata wait = new Metadata();
        wait.put(Pushback.KEY, "200");
        assertThat(GuardClientInterceptor.retriesExhausted(Status.UNAVAILABLE, none, p, null)).isTrue();
        assertThat(GuardClientInterceptor.retriesExhausted(Status.RESOURCE_EXHAUSTED, wait, p, null)).isTrue();
        assertThat(GuardClientInterceptor.retriesExhausted(Status.INTERNAL, none, p, null)).isFalse();
        assertThat(GuardClientInterceptor.retriesExhausted(Status.INTERNAL, stop, p, null)).isTrue();
        assertThat(GuardClientInterceptor.retriesExhausted(Status.OK, stop, p, null)).isFalse();
        assertThat(GuardClientInterceptor.retriesExhausted(Status.UNAVAILABLE, none, null, null)).isFalse();
        assertThat(GuardClientInterceptor.retriesExhausted(Status.DEADLINE_EXCEEDED, none, p, null)).isFalse();
        RetryPolicy perAttempt = new RetryPolicy(3, Duration.ofMillis(1), Duration.ofMillis(5), 2,
                Set.of(Status.Code.UNAVAILABLE), Duration.ofMillis(100));
        assertThat(GuardClientInterceptor.retriesExhausted(Status.DEADLINE_EXCEEDED, none, perAttempt, null)).isTrue();
        var hedging = new io.github.grpcretry.policy.HedgingPolicy(3, Duration.ofMillis(10), Set.of(Status.Code.UNAVAILABLE));
        assertThat(GuardClientInterceptor.retriesExhausted(Status.UNAVAILABLE, none, null, hedging)).isTrue();
        assertThat(GuardClientInterceptor.retriesExhausted(Status.INTERNAL, none, null, hedging)).isFalse();
    }

    @Test
    void retriesDisabledDoesNotMarkButAnOwnPolicyDoes() throws Exception {
        c = ScriptedServer.start("guard-c-" + UUID.randomUUID()).script(a -> Action.fail(Status.Code.UNAVAILABLE));
        ManagedChannel toC = channelToC(config(policy(3, Status.Code.UNAVAILABLE), null), false, RetryEventListener.NOOP);
        ManagedChannel disabled = startB(toC, stub -> stub
                .withOption(GrpcRetryCallOptions.DISABLE, true).unaryRpc(req()));
        assertThat(pushback(callFails(disabled))).isNull();
        assertThat(c.arrivalCount()).isEqualTo(1);

        ManagedChannel noPolicyChannel = channelToC(config(null, null), false, RetryEventListener.NOOP);
        ManagedChannel own = startB(noPolicyChannel, stub -> stub
                .withOption(GrpcRetryCallOptions.POLICY, policy(2, Status.Code.UNAVAILABLE)).unaryRpc(req()));
        assertThat(pushback(callFails(own))).isEqualTo("-1");
        assertThat(c.arrivalCount()).isEqualTo(3);
    }
}
