package io.github.grpcretry.observation;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.AttemptKind;
import io.github.grpcretry.attempt.AttemptObserver;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.attempt.SuppressionReason;
import io.github.grpcretry.internal.callback.CallbackFailures;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.HedgingPolicy;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.binder.grpc.ObservationGrpcClientInterceptor;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.SenderContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Per-attempt observations on a real in-process server, the engine inside Micrometer's own gRPC client
 * observation interceptor (as net.devh and Spring gRPC install it). A propagating handler writes each
 * sender observation's id into the {@code x-trace} header, as a tracing handler writes {@code traceparent}:
 * the server's arrivals show which observation each attempt carried.
 */
class AttemptObservationTest {

    private static final String SERVICE = "grpc.testing.SimpleService";
    private static final Metadata.Key<String> TRACE = Metadata.Key.of("x-trace", Metadata.ASCII_STRING_MARSHALLER);

    private final Recorder recorder = new Recorder();
    private final ObservationRegistry registry = ObservationRegistry.create();
    private ScriptedServer server;
    private RetryScheduler scheduler;
    private ManagedChannel channel;

    @BeforeEach
    void setUp() throws Exception {
        registry.observationConfig().observationHandler(recorder);
        server = ScriptedServer.start("attempt-observation-" + System.nanoTime());
        scheduler = RetryScheduler.create(1, "attempt-observation");
    }

    @AfterEach
    void tearDown() throws Exception {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        scheduler.close();
        server.close();
    }

    private SimpleServiceGrpc.SimpleServiceBlockingStub stub(ServiceConfig sc, RetryThrottle throttle,
            boolean observer, boolean callObservation) {
        ChannelRetryConfig config = ChannelRetryConfig.of("traced", sc);
        RetryingClientInterceptor engine = RetryingClientInterceptor.builder(config)
                .throttle(throttle)
                .scheduler(scheduler)
                .attemptObserver(observer ? new ObservationAttemptObserver(registry) : null)
                .build();
        InProcessChannelBuilder b = InProcessChannelBuilder.forName(server.inProcessName());
        b.defaultServiceConfig(sc.toServiceConfigMap(false)).intercept(engine);
        if (callObservation) {
            b.intercept(new ObservationGrpcClientInterceptor(registry)); // added last: outermost
        }
        channel = b.build();
        return SimpleServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    private static ServiceConfig retrying(int maxAttempts, RetryThrottlingPolicy throttling) {
        RetryPolicy p = new RetryPolicy(maxAttempts, Duration.ofMillis(20), Duration.ofMillis(100), 2,
                Set.of(Status.Code.UNAVAILABLE), null);
        return new ServiceConfig(List.of(new MethodConfig(List.of(MethodName.of(SERVICE, null)), null, null, null, null,
                p, null)), throttling);
    }

    @Test
    void twoFailuresThenSuccessGiveThreeChildrenWithOwnContexts() {
        server.script(ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE));
        stub(retrying(3, null), null, true, true).unaryRpc(SimpleRequest.getDefaultInstance());

        Recorded call = recorder.single("grpc.client");
        List<Recorded> attempts = recorder.named(DefaultAttemptObservationConvention.NAME);
        assertThat(attempts).hasSize(3);
        for (int i = 0; i < 3; i++) {
            Recorded a = attempts.get(i);
            assertThat(a.context.getParentObservation().getContextView()).as("attempt %d's parent", i + 1).isSameAs(call.context);
            assertThat(a.context.getContextualName()).isEqualTo("Attempt.grpc.testing.SimpleService.UnaryRpc");
            assertThat(a.high(DefaultAttemptObservationConvention.PREVIOUS_RPC_ATTEMPTS)).isEqualTo(String.valueOf(i));
            assertThat(a.low(DefaultAttemptObservationConvention.STATUS_CODE)).isEqualTo(i < 2 ? "UNAVAILABLE" : "OK");
            assertThat(a.low(DefaultAttemptObservationConvention.COMMITTED)).isEqualTo(String.valueOf(i == 2));
            assertThat(a.low(DefaultAttemptObservationConvention.KIND)).isEqualTo(i == 0 ? "initial" : "retry");
            assertThat(a.low(DefaultAttemptObservationConvention.TRANSPARENT_RETRY)).isEqualTo("false");
            assertThat(a.low(DefaultAttemptObservationConvention.RPC_METHOD)).isEqualTo("UnaryRpc");
            assertThat(a.low(DefaultAttemptObservationConvention.RPC_SERVICE)).isEqualTo(SERVICE);
            assertThat(a.context.getError() != null).as("attempt %d marked as an error", i + 1).isEqualTo(i < 2);
            // the server saw this attempt's context, and only it (the call's was replaced)
            ScriptedServer.Arrival arrival = server.arrivals().get(i);
            assertThat(iterable(arrival.headers.getAll(TRACE))).containsExactly(a.id);
            if (i > 0) { // the backoff: 20 ms, then 40 ms, × U(0.8, 1.2), as the timer waited it
                assertThat(Long.parseLong(a.high(DefaultAttemptObservationConvention.DELAY_MS)))
                        .isGreaterThanOrEqualTo(i == 1 ? 16 : 32);
                assertThat(a.startNanos).isGreaterThanOrEqualTo(attempts.get(i - 1).stopNanos); // one at a time
                assertThat(a.high(DefaultAttemptObservationConvention.DELAY_SOURCE)).isEqualTo("policy");
            } else {
                assertThat(a.high(DefaultAttemptObservationConvention.DELAY_MS)).isNull();
                assertThat(a.high(DefaultAttemptObservationConvention.DELAY_SOURCE)).isNull();
            }
        }
        assertThat(call.suppressions()).isEmpty();
    }

    @Test
    void eachAttemptSpanNamesTheBackendItReached() throws Exception {
        try (io.github.grpcretry.testing.Backends backends = io.github.grpcretry.testing.Backends.start(2)) {
            for (int i = 0; i < 2; i++) { // every first attempt fails: each call tries both backends
                backends.server(i).script(a -> a.previousAttempts == null
                        ? ScriptedServer.Action.fail(Status.Code.UNAVAILABLE) : ScriptedServer.Action.ok());
            }
            ServiceConfig sc = retrying(3, null);
            ChannelRetryConfig config = ChannelRetryConfig.of("traced", sc);
            channel = io.grpc.Grpc.newChannelBuilder(backends.target(), io.grpc.InsecureChannelCredentials.create())
                    .defaultServiceConfig(io.github.grpcretry.internal.backends.TriedBackendsLoadBalancerProvider.wrap(
                            Map.of(), "round_robin"))
                    .intercept(RetryingClientInterceptor.builder(config).scheduler(scheduler)
                            .attemptObserver(new ObservationAttemptObserver(registry)).build())
                    .intercept(new ObservationGrpcClientInterceptor(registry))
                    .build();
            backends.warmUp(channel, 2);
            recorder.clear();

            SimpleServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                    .unaryRpc(SimpleRequest.getDefaultInstance());

            List<Recorded> attempts = recorder.named(DefaultAttemptObservationConvention.NAME);
            assertThat(attempts).hasSize(2);
            List<String> ports = new java.util.ArrayList<>();
            for (Recorded a : attempts) {
                assertThat(a.high(DefaultAttemptObservationConvention.NETWORK_PEER_ADDRESS)).isEqualTo("127.0.0.1");
                ports.add(a.high(DefaultAttemptObservationConvention.NETWORK_PEER_PORT));
            }
            assertThat(ports).as("the two backends, one per attempt")
                    .containsExactlyInAnyOrder(String.valueOf(backends.server(0).port()),
                            String.valueOf(backends.server(1).port()));
            int first = backends.server(0).arrivals().stream().anyMatch(x -> x.previousAttempts == null) ? 0 : 1;
            assertThat(ports.get(0)).as("the first attempt's span names the backend its arrival reached")
                    .isEqualTo(String.valueOf(backends.server(first).port()));
        }
    }

    @Test
    void theDocumentationForMicrometersToolingNamesWhatTheAttemptsCarry() {
        server.script(ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE));
        stub(retrying(3, null), null, true, true).unaryRpc(SimpleRequest.getDefaultInstance());

        DefaultAttemptObservationConvention.Documentation doc = DefaultAttemptObservationConvention.Documentation.ATTEMPT;
        List<Recorded> attempts = recorder.named(doc.getName());
        assertThat(attempts).hasSize(2);
        java.util.Set<String> low = java.util.Arrays.stream(doc.getLowCardinalityKeyNames())
                .map(io.micrometer.common.docs.KeyName::asString).collect(Collectors.toSet());
        java.util.Set<String> high = java.util.Arrays.stream(doc.getHighCardinalityKeyNames())
                .map(io.micrometer.common.docs.KeyName::asString).collect(Collectors.toSet());
        for (Recorded a : attempts) {
            assertThat(a.context.getLowCardinalityKeyValues().stream().map(kv -> kv.getKey()))
                    .as("low-cardinality keys of an ended attempt").containsExactlyInAnyOrderElementsOf(low);
            assertThat(a.context.getHighCardinalityKeyValues().stream().map(kv -> kv.getKey()))
                    .as("high-cardinality keys").isSubsetOf(high);
        }
    }

    @Test
    void aCallWithoutAnObservationOfItsOwnIsNotObserved() {
        server.script(ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE));
        stub(retrying(3, null), null, true, false).unaryRpc(SimpleRequest.getDefaultInstance());
        assertThat(recorder.all()).isEmpty();
        assertThat(server.arrivals()).hasSize(2).allSatisfy(a -> assertThat(a.headers.containsKey(TRACE)).isFalse());
    }

    @Test
    void withoutTheObserverTheCallsContextGoesToEveryAttempt() {
        server.script(ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE));
        stub(retrying(3, null), null, false, true).unaryRpc(SimpleRequest.getDefaultInstance());
        Recorded call = recorder.single("grpc.client");
        assertThat(recorder.named(DefaultAttemptObservationConvention.NAME)).isEmpty();
        assertThat(server.arrivals()).hasSize(2)
                .allSatisfy(a -> assertThat(iterable(a.headers.getAll(TRACE))).containsExactly(call.id));
    }

    @Test
    void aThrottledRetryIsAnEventOnTheCallsObservation() {
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        RetryThrottlingPolicy throttling = new RetryThrottlingPolicy(2, 0.1); // one failure brings it to its threshold
        Assertions.assertThatThrownBy(() -> stub(retrying(3, throttling), new RetryThrottle(throttling), true, true)
                .unaryRpc(SimpleRequest.getDefaultInstance())).isInstanceOf(StatusRuntimeException.class);
        Recorded call = recorder.single("grpc.client");
        assertThat(recorder.named(DefaultAttemptObservationConvention.NAME)).hasSize(1);
        assertThat(call.suppressions()).containsExactly("retry.suppressed.throttled");
    }

    @Test
    void aHedgedCallHasOverlappingAttemptsAndTheLoserIsCancelled() {
        // the first attempt answers after 5 s, the hedge sent after 50 ms at once: the hedge wins (told apart by
        // their grpc-previous-rpc-attempts, not by their order of arrival, which a loaded machine can swap)
        server.script(a -> a.previousAttempts == null ? ScriptedServer.Action.ok().delay(5_000) : ScriptedServer.Action.ok());
        ServiceConfig sc = new ServiceConfig(List.of(new MethodConfig(List.of(MethodName.of(SERVICE, null)), null, null,
                null, null, null, new HedgingPolicy(2, Duration.ofMillis(50), Set.of(Status.Code.UNAVAILABLE)))), null);
        stub(sc, null, true, true).unaryRpc(SimpleRequest.getDefaultInstance());
        Recorded call = recorder.single("grpc.client");
        recorder.awaitStopped(DefaultAttemptObservationConvention.NAME, 2); // the loser ends once its cancel completes
        List<Recorded> attempts = recorder.named(DefaultAttemptObservationConvention.NAME);
        assertThat(attempts).hasSize(2).allSatisfy(a ->
                assertThat(a.context.getParentObservation().getContextView()).isSameAs(call.context));
        Recorded first = attempts.get(0);
        Recorded hedge = attempts.get(1);
        assertThat(hedge.low(DefaultAttemptObservationConvention.KIND)).isEqualTo("hedge");
        assertThat(hedge.low(DefaultAttemptObservationConvention.STATUS_CODE)).isEqualTo("OK");
        assertThat(hedge.low(DefaultAttemptObservationConvention.COMMITTED)).isEqualTo("true");
        assertThat(first.low(DefaultAttemptObservationConvention.STATUS_CODE)).isEqualTo("CANCELLED");
        assertThat(first.low(DefaultAttemptObservationConvention.COMMITTED)).isEqualTo("false");
        assertThat(first.context.getError()).as("a lost hedge is not an error").isNull();
        assertThat(hedge.startNanos).as("the hedge started while the first attempt ran").isLessThan(first.stopNanos);
        assertThat(Long.parseLong(hedge.high(DefaultAttemptObservationConvention.DELAY_MS))).isGreaterThanOrEqualTo(40);
        assertThat(hedge.high(DefaultAttemptObservationConvention.PREVIOUS_RPC_ATTEMPTS)).isEqualTo("1");
    }

    @Test
    void pushbackIsRecordedOnTheAttemptThatReceivedIt() {
        server.script(a -> a.index == 1 ? ScriptedServer.Action.fail(Status.Code.UNAVAILABLE).pushback("30")
                : ScriptedServer.Action.ok());
        stub(retrying(3, null), null, true, true).unaryRpc(SimpleRequest.getDefaultInstance());
        List<Recorded> attempts = recorder.named(DefaultAttemptObservationConvention.NAME);
        assertThat(attempts).hasSize(2);
        assertThat(attempts.get(0).high(DefaultAttemptObservationConvention.PUSHBACK_MS)).isEqualTo("30");
        assertThat(attempts.get(1).high(DefaultAttemptObservationConvention.PUSHBACK_MS)).isNull();
        assertThat(Long.parseLong(attempts.get(1).high(DefaultAttemptObservationConvention.DELAY_MS)))
                .as("the pushback's 30 ms were waited").isGreaterThanOrEqualTo(25);
    }

    @Test
    void anObserverThatThrowsBreaksNoCall() {
        server.script(ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE));
        AttemptObserver throwing = target -> new AttemptObserver.Call() {
            @Override
            public AttemptObserver.Attempt attemptStarting(AttemptKind kind, int attemptNumber, long delayNanos,
                    Metadata headers) {
                throw new IllegalStateException("observer bug");
            }

            @Override
            public void retrySuppressed(SuppressionReason reason, Status.Code code) {
                throw new IllegalStateException("observer bug");
            }
        };
        ServiceConfig sc = retrying(3, null);
        ChannelRetryConfig config = ChannelRetryConfig.of("traced", sc);
        RetryingClientInterceptor engine = RetryingClientInterceptor.builder(config).scheduler(scheduler)
                .attemptObserver(throwing).build();
        channel = InProcessChannelBuilder.forName(server.inProcessName()).defaultServiceConfig(sc.toServiceConfigMap(false))
                .intercept(engine).build();
        long before = CallbackFailures.SHARED.count(throwing, "attemptStarting");
        SimpleServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .unaryRpc(SimpleRequest.getDefaultInstance());
        assertThat(server.arrivalCount()).isEqualTo(3);
        assertThat(CallbackFailures.SHARED.count(throwing, "attemptStarting") - before).isEqualTo(3);
    }

    private static List<String> iterable(Iterable<String> values) {
        List<String> out = new ArrayList<>();
        if (values != null) {
            values.forEach(out::add);
        }
        return out;
    }

    /** One observation as the recorder saw it. */
    static final class Recorded {
        final Observation.Context context;
        final String id;
        final long startNanos = System.nanoTime();
        volatile long stopNanos = -1;
        final List<String> events = Collections.synchronizedList(new ArrayList<>());

        Recorded(Observation.Context context, String id) {
            this.context = context;
            this.id = id;
        }

        /** The events of suppressed retries (Micrometer's own "sent" and "received" left out). */
        List<String> suppressions() {
            synchronized (events) {
                return events.stream().filter(e -> e.startsWith("retry.suppressed.")).collect(Collectors.toList());
            }
        }

        String low(String key) {
            var kv = context.getLowCardinalityKeyValue(key);
            return kv == null ? null : kv.getValue();
        }

        String high(String key) {
            var kv = context.getHighCardinalityKeyValue(key);
            return kv == null ? null : kv.getValue();
        }
    }

    /** Records every observation and, for a sender, writes its id into the carrier (as a propagating tracer does). */
    static final class Recorder implements ObservationHandler<Observation.Context> {
        private final AtomicInteger ids = new AtomicInteger();
        private final List<Recorded> recorded = Collections.synchronizedList(new ArrayList<>());

        @Override
        @SuppressWarnings({"unchecked", "rawtypes"})
        public void onStart(Observation.Context context) {
            Recorded r = new Recorded(context, "obs-" + ids.incrementAndGet());
            context.put(Recorded.class, r);
            recorded.add(r);
            if (context instanceof SenderContext sender && sender.getCarrier() != null) {
                sender.getSetter().set(sender.getCarrier(), TRACE.name(), r.id);
            }
        }

        @Override
        public void onEvent(Observation.Event event, Observation.Context context) {
            ((Recorded) context.get(Recorded.class)).events.add(event.getName());
        }

        @Override
        public synchronized void onStop(Observation.Context context) {
            ((Recorded) context.get(Recorded.class)).stopNanos = System.nanoTime();
            notifyAll();
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }

        void clear() {
            recorded.clear();
        }

        List<Recorded> all() {
            synchronized (recorded) {
                return new ArrayList<>(recorded);
            }
        }

        List<Recorded> named(String name) {
            return all().stream().filter(r -> r.context.getName().equals(name)).collect(Collectors.toList());
        }

        Recorded single(String name) {
            List<Recorded> r = named(name);
            assertThat(r).as(name).hasSize(1);
            return r.get(0);
        }

        /** Waits (bounded) until {@code n} observations named {@code name} have stopped. */
        synchronized void awaitStopped(String name, int n) {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (named(name).stream().filter(r -> r.stopNanos >= 0).count() < n) {
                long left = end - System.nanoTime();
                assertThat(left).as("%d %s observations stopped in 30 s", n, name).isPositive();
                try {
                    wait(TimeUnit.NANOSECONDS.toMillis(left) + 1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError(e);
                }
            }
        }
    }
}
