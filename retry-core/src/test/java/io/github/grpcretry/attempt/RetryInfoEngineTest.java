package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.rpc.DebugInfo;
import com.google.rpc.RetryInfo;
import io.github.grpcretry.metrics.MicrometerRetryEventListener;
import io.github.grpcretry.metrics.RetryMeterNames;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The server's {@code google.rpc.RetryInfo} in the {@code grpc-status-details-bin} trailer as the delay before the
 * next attempt, with a real in-process server that sends the trailer: the delay replaces the policy's backoff, every
 * other rule of the engine still applies, and whatever cannot be read falls back to the policy.
 */
class RetryInfoEngineTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final Metadata.Key<byte[]> DETAILS =
            Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER);
    private static final Metadata.Key<String> PUSHBACK =
            Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER);

    /** A policy whose backoff (at least 0.8 × 10 s) no test waits: a retry sooner followed the server's delay. */
    private static final RetryPolicy SLOW = Configs.policy(4, 10_000, 10_000, 1, Status.Code.UNAVAILABLE);
    /** A policy with a short backoff (16 to 24 ms): what a fallback waits. */
    private static final RetryPolicy FAST = Configs.policy(4, 20, 20, 1, Status.Code.UNAVAILABLE);

    private final String name = "retry-info-" + System.nanoTime();
    /** How the server answers attempt n (1 = the first): the trailers of a failure, or null for OK. */
    private volatile IntFunction<Failure> script = n -> null;
    private final ConcurrentLinkedQueue<Long> arrivals = new ConcurrentLinkedQueue<>();
    private final List<ManagedChannel> channels = new ArrayList<>();
    private Server server;
    private RetryScheduler scheduler;

    record Failure(Status status, Metadata trailers) {
    }

    @BeforeEach
    void startServer() throws Exception {
        scheduler = RetryScheduler.create(1, name);
        server = InProcessServerBuilder.forName(name).directExecutor()
                .addService(new SimpleServiceGrpc.SimpleServiceImplBase() {
                    @Override
                    public void unaryRpc(SimpleRequest request, StreamObserver<SimpleResponse> out) {
                        arrivals.add(System.nanoTime());
                        Failure f = script.apply(arrivals.size());
                        if (f == null) {
                            out.onNext(SimpleResponse.newBuilder().setResponseMessage("ok").build());
                            out.onCompleted();
                        } else {
                            out.onError(f.status().asRuntimeException(f.trailers()));
                        }
                    }
                }).build().start();
    }

    @AfterEach
    void stop() throws Exception {
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        assertThat(EngineTestAccess.outstandingTimers(scheduler)).as("timers outstanding after the test").isZero();
        scheduler.close();
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    private ManagedChannel client(ChannelRetryConfig config, RetryEventListener events) {
        return client(RetryingClientInterceptor.builder(config).eventListener(events).scheduler(scheduler));
    }

    private ManagedChannel client(RetryingClientInterceptor.Builder engine) {
        ManagedChannel c = InProcessChannelBuilder.forName(name).directExecutor().intercept(engine.build()).build();
        channels.add(c);
        return c;
    }

    // ---------------------------------------------------------------- what the server sends

    private static Failure retryInfo(Status.Code code, Duration delay) {
        return withDetails(code, code, Any.pack(RetryInfo.newBuilder().setRetryDelay(proto(delay)).build()));
    }

    private static com.google.protobuf.Duration proto(Duration d) {
        return com.google.protobuf.Duration.newBuilder().setSeconds(d.getSeconds()).setNanos(d.getNano()).build();
    }

    /** A failure with {@code code} whose trailer holds a {@code google.rpc.Status} of {@code protoCode} with these details. */
    private static Failure withDetails(Status.Code code, Status.Code protoCode, Any... details) {
        com.google.rpc.Status.Builder s = com.google.rpc.Status.newBuilder().setCode(protoCode.value()).setMessage("busy");
        for (Any d : details) {
            s.addDetails(d);
        }
        Metadata trailers = new Metadata();
        trailers.put(DETAILS, s.build().toByteArray());
        return new Failure(Status.fromCode(code).withDescription("busy"), trailers);
    }

    private static Failure rawDetails(byte[] bytes) {
        Metadata trailers = new Metadata();
        trailers.put(DETAILS, bytes);
        return new Failure(Status.UNAVAILABLE.withDescription("busy"), trailers);
    }

    private static Failure withPushback(Failure f, String pushback) {
        f.trailers().put(PUSHBACK, pushback);
        return f;
    }

    private static IntFunction<Failure> firstFails(Failure f) {
        return n -> n == 1 ? f : null;
    }

    private long gapMillis() {
        List<Long> at = new ArrayList<>(arrivals);
        return TimeUnit.NANOSECONDS.toMillis(at.get(1) - at.get(0));
    }

    // ---------------------------------------------------------------- the delay honoured

    @Test
    void theRetryWaitsTheServersDelayNotThePolicyBackoff() throws Exception {
        RecordingEvents events = new RecordingEvents();
        script = firstFails(retryInfo(Status.Code.UNAVAILABLE, Duration.ofMillis(50)));
        Rpc.Outcome o = Rpc.unary(client(Configs.channel(SLOW), events), CallOptions.DEFAULT, "a");

        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(arrivals).hasSize(2);
        assertThat(events.ofType("retryScheduled").get(0).nanos()).as("exactly the server's delay").isEqualTo(50 * MS);
        assertThat(events.delaySources).containsExactly(DelaySource.RETRY_INFO);
        assertThat(gapMillis()).as("the timer waited it").isGreaterThanOrEqualTo(50);
        assertThat(o.elapsedMillis()).as("far below the policy's 8 s at least").isLessThan(5_000);
    }

    @Test
    void theDelaySourceIsCountedAndGivenToTheAttemptObserver() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        List<DelaySource> seen = new ArrayList<>();
        AttemptObserver observer = target -> new AttemptObserver.Call() {
            @Override
            public AttemptObserver.Attempt attemptStarting(AttemptKind kind, int n, long delay, Metadata headers) {
                return new AttemptObserver.Attempt() {
                    @Override
                    public AttemptObserver.Scope openScope() {
                        return () -> { };
                    }

                    @Override
                    public void ended(Status status, Metadata trailers, boolean committed, boolean cancelled) {
                    }
                };
            }

            @Override
            public AttemptObserver.Attempt attemptStarting(AttemptKind kind, int n, long delay, DelaySource source,
                    Metadata headers) {
                synchronized (seen) {
                    seen.add(source);
                }
                return attemptStarting(kind, n, delay, headers);
            }

            @Override
            public void retrySuppressed(SuppressionReason reason, Status.Code code) {
            }
        };
        script = n -> switch (n) {
            case 1 -> retryInfo(Status.Code.UNAVAILABLE, Duration.ofMillis(5));
            case 2 -> withPushback(new Failure(Status.UNAVAILABLE, new Metadata()), "5");
            case 3 -> new Failure(Status.UNAVAILABLE, new Metadata());
            default -> null;
        };
        ManagedChannel c = client(RetryingClientInterceptor.builder(Configs.channel(FAST)).scheduler(scheduler)
                .eventListener(new MicrometerRetryEventListener(registry)).attemptObserver(observer));

        assertThat(Rpc.unary(c, CallOptions.DEFAULT, "a").code()).isEqualTo(Status.Code.OK);
        for (DelaySource s : DelaySource.values()) {
            assertThat(registry.get(RetryMeterNames.RETRY_DELAYS).tag("source", s.tagValue()).tag("client", "test")
                    .tag("method", "grpc.testing.SimpleService/UnaryRpc").counter().count()).as(s.name()).isEqualTo(1.0);
        }
        synchronized (seen) {
            assertThat(seen).containsExactly(DelaySource.RETRY_INFO, DelaySource.PUSHBACK, DelaySource.POLICY);
        }
    }

    // ---------------------------------------------------------------- what cannot be read falls back

    static Stream<Arguments> unusable() {
        Any debug = Any.pack(DebugInfo.newBuilder().setDetail("no delay here").build());
        return Stream.of(
                Arguments.of("not a Status at all", rawDetails(new byte[] {(byte) 0xff, 0x01, 0x02})),
                Arguments.of("an empty trailer value", rawDetails(new byte[0])),
                Arguments.of("a Status of another code", withDetails(Status.Code.UNAVAILABLE, Status.Code.INTERNAL,
                        Any.pack(RetryInfo.newBuilder().setRetryDelay(proto(Duration.ofSeconds(20))).build()))),
                Arguments.of("no RetryInfo in the details", withDetails(Status.Code.UNAVAILABLE, Status.Code.UNAVAILABLE, debug)),
                Arguments.of("a RetryInfo without delay", withDetails(Status.Code.UNAVAILABLE, Status.Code.UNAVAILABLE,
                        Any.pack(RetryInfo.getDefaultInstance()))),
                Arguments.of("a negative delay", withDetails(Status.Code.UNAVAILABLE, Status.Code.UNAVAILABLE,
                        Any.pack(RetryInfo.newBuilder().setRetryDelay(com.google.protobuf.Duration.newBuilder()
                                .setSeconds(-20)).build()))),
                Arguments.of("nanos out of range", withDetails(Status.Code.UNAVAILABLE, Status.Code.UNAVAILABLE,
                        Any.pack(RetryInfo.newBuilder().setRetryDelay(com.google.protobuf.Duration.newBuilder()
                                .setSeconds(20).setNanos(2_000_000_000)).build()))),
                Arguments.of("a RetryInfo whose bytes are garbage", withDetails(Status.Code.UNAVAILABLE,
                        Status.Code.UNAVAILABLE, Any.newBuilder().setTypeUrl("type.googleapis.com/google.rpc.RetryInfo")
                                .setValue(com.google.protobuf.ByteString.copyFrom(new byte[] {(byte) 0xff, (byte) 0xff}))
                                .build())));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("unusable")
    void anUnusableRetryInfoFallsBackToThePolicyBackoff(String what, Failure failure) throws Exception {
        RecordingEvents events = new RecordingEvents();
        script = firstFails(failure);
        Rpc.Outcome o = Rpc.unary(client(Configs.channel(FAST), events), CallOptions.DEFAULT, "a");

        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(arrivals).hasSize(2);
        assertThat(events.ofType("retryScheduled").get(0).nanos()).as("the policy's 20 ms × U(0.8, 1.2)")
                .isBetween(16 * MS, 24 * MS);
        assertThat(events.delaySources).containsExactly(DelaySource.POLICY);
    }

    @Test
    void anUnreadableTrailerReachesTheApplicationAsSent() throws Exception {
        RecordingEvents events = new RecordingEvents();
        script = n -> rawDetails(new byte[] {(byte) 0xff, 0x01});
        Rpc.Outcome o = Rpc.unary(client(Configs.channel(Configs.policy(2, 5, 5, 1, Status.Code.UNAVAILABLE)), events),
                CallOptions.DEFAULT, "a");

        assertThat(o.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(o.status().getDescription()).isEqualTo("busy");
        assertThat(arrivals).hasSize(2);
        assertThat(events.suppressions()).containsExactly(SuppressionReason.MAX_ATTEMPTS);
    }

    // ---------------------------------------------------------------- the other rules still apply

    @Test
    void thePushbackWinsOverRetryInfo() throws Exception {
        RecordingEvents events = new RecordingEvents();
        script = firstFails(withPushback(retryInfo(Status.Code.UNAVAILABLE, Duration.ofSeconds(20)), "30"));
        Rpc.Outcome o = Rpc.unary(client(Configs.channel(SLOW), events), CallOptions.DEFAULT, "a");

        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(events.ofType("retryScheduled").get(0).nanos()).isEqualTo(30 * MS);
        assertThat(events.delaySources).containsExactly(DelaySource.PUSHBACK);
    }

    @Test
    void aPushbackStopWinsOverRetryInfo() throws Exception {
        RecordingEvents events = new RecordingEvents();
        script = n -> withPushback(retryInfo(Status.Code.UNAVAILABLE, Duration.ofMillis(5)), "-1");
        Rpc.Outcome o = Rpc.unary(client(Configs.channel(SLOW), events), CallOptions.DEFAULT, "a");

        assertThat(o.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(arrivals).hasSize(1);
        assertThat(events.suppressions()).containsExactly(SuppressionReason.PUSHBACK);
    }

    @Test
    void aNonRetryableStatusIsNotRetriedWhateverTheDelay() throws Exception {
        RecordingEvents events = new RecordingEvents();
        script = n -> retryInfo(Status.Code.RESOURCE_EXHAUSTED, Duration.ofMillis(5));
        Rpc.Outcome o = Rpc.unary(client(Configs.channel(SLOW), events), CallOptions.DEFAULT, "a");

        assertThat(o.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(arrivals).hasSize(1);
        assertThat(events.suppressions()).containsExactly(SuppressionReason.NON_RETRYABLE_STATUS);
    }

    @Test
    void theAttemptCapStillApplies() throws Exception {
        RecordingEvents events = new RecordingEvents();
        script = n -> retryInfo(Status.Code.UNAVAILABLE, Duration.ofMillis(5));
        Rpc.Outcome o = Rpc.unary(client(Configs.channel(Configs.policy(3, 10_000, 10_000, 1, Status.Code.UNAVAILABLE)),
                events), CallOptions.DEFAULT, "a");

        assertThat(o.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(arrivals).hasSize(3);
        assertThat(events.delaySources).containsExactly(DelaySource.RETRY_INFO, DelaySource.RETRY_INFO);
        assertThat(events.suppressions()).containsExactly(SuppressionReason.MAX_ATTEMPTS);
    }

    @Test
    void theThrottleStillApplies() throws Exception {
        RecordingEvents events = new RecordingEvents();
        script = n -> retryInfo(Status.Code.UNAVAILABLE, Duration.ofMillis(5));
        RetryThrottlingPolicy oneToken = new RetryThrottlingPolicy(1, 0.1);
        ChannelRetryConfig config = Configs.channel(Configs.service(SLOW, oneToken));
        Rpc.Outcome o = Rpc.unary(client(RetryingClientInterceptor.builder(config).eventListener(events)
                .scheduler(scheduler).throttle(new io.github.grpcretry.throttle.RetryThrottle(oneToken))),
                CallOptions.DEFAULT, "a");

        assertThat(o.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(arrivals).hasSize(1);
        assertThat(events.suppressions()).containsExactly(SuppressionReason.THROTTLED);
    }

    @Test
    void theBudgetStillApplies() throws Exception {
        RecordingEvents events = new RecordingEvents();
        script = n -> retryInfo(Status.Code.UNAVAILABLE, Duration.ofMillis(5));
        ChannelRetryConfig config = Configs.channel(Configs.service(SLOW, null), ChannelRetryConfig.DEFAULT_PER_RPC_BUFFER_LIMIT,
                ChannelRetryConfig.DEFAULT_RETRY_BUFFER_SIZE, new RetryBudgetPolicy(0.01, 0, Duration.ofSeconds(10)));
        io.github.grpcretry.budget.RetryBudget budget = new io.github.grpcretry.budget.RetryBudget(config.budget());
        Rpc.Outcome o = Rpc.unary(client(RetryingClientInterceptor.builder(config).eventListener(events)
                .scheduler(scheduler).budget(budget)), CallOptions.DEFAULT, "a");

        assertThat(o.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(arrivals).hasSize(1);
        assertThat(events.suppressions()).containsExactly(SuppressionReason.BUDGET);
    }

    @Test
    void aDelayPastTheDeadlineEndsTheCallAtOnceWithTheLastStatus() throws Exception {
        RecordingEvents events = new RecordingEvents();
        script = n -> retryInfo(Status.Code.UNAVAILABLE, Duration.ofSeconds(20));
        Rpc.Outcome o = Rpc.unary(client(Configs.channel(FAST), events),
                CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), "a");

        assertThat(o.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(o.status().getDescription()).isEqualTo("busy");
        assertThat(arrivals).hasSize(1);
        assertThat(events.suppressions()).containsExactly(SuppressionReason.DEADLINE);
        assertThat(o.elapsedMillis()).as("not waited until the 10 s deadline").isLessThan(5_000);
    }

    @Test
    void withADeadlineALongDelayWithinItIsWaited() throws Exception {
        RecordingEvents events = new RecordingEvents();
        script = firstFails(retryInfo(Status.Code.UNAVAILABLE, Duration.ofMillis(60)));
        ChannelRetryConfig config = Configs.channel(SLOW).withRetryInfo(true, Duration.ofMillis(10));
        Rpc.Outcome o = Rpc.unary(client(config, events), CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS), "a");

        assertThat(o.code()).as("the max-delay binds calls without deadline only").isEqualTo(Status.Code.OK);
        assertThat(events.ofType("retryScheduled").get(0).nanos()).isEqualTo(60 * MS);
    }

    @Test
    void withoutDeadlineADelayPastTheMaxDelayStopsRetrying() throws Exception {
        RecordingEvents events = new RecordingEvents();
        script = n -> retryInfo(Status.Code.UNAVAILABLE, Duration.ofMillis(1_001));
        ChannelRetryConfig config = Configs.channel(FAST).withRetryInfo(true, Duration.ofSeconds(1));
        Rpc.Outcome o = Rpc.unary(client(config, events), CallOptions.DEFAULT, "a");

        assertThat(o.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(arrivals).hasSize(1);
        assertThat(events.ofType("retryScheduled")).isEmpty();
        assertThat(events.suppressions()).containsExactly(SuppressionReason.PUSHBACK);
    }

    @Test
    void withoutDeadlineADelayAtTheMaxDelayIsWaited() throws Exception {
        RecordingEvents events = new RecordingEvents();
        script = firstFails(retryInfo(Status.Code.UNAVAILABLE, Duration.ofMillis(40)));
        ChannelRetryConfig config = Configs.channel(SLOW).withRetryInfo(true, Duration.ofMillis(40));
        Rpc.Outcome o = Rpc.unary(client(config, events), CallOptions.DEFAULT, "a");

        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(events.ofType("retryScheduled").get(0).nanos()).isEqualTo(40 * MS);
    }

    @Test
    void switchedOffTheServersDelayIsIgnored() throws Exception {
        RecordingEvents events = new RecordingEvents();
        script = firstFails(retryInfo(Status.Code.UNAVAILABLE, Duration.ofSeconds(20)));
        ChannelRetryConfig config = Configs.channel(FAST).withRetryInfo(false, Duration.ofSeconds(30));
        Rpc.Outcome o = Rpc.unary(client(config, events), CallOptions.DEFAULT, "a");

        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(events.ofType("retryScheduled").get(0).nanos()).isBetween(16 * MS, 24 * MS);
        assertThat(events.delaySources).containsExactly(DelaySource.POLICY);
    }

    @Test
    void theServersDelayReplacesADecidersDelay() throws Exception {
        RecordingEvents events = new RecordingEvents();
        script = firstFails(retryInfo(Status.Code.UNAVAILABLE, Duration.ofMillis(30)));
        RetryDecider decider = new RetryDecider() {
            @Override
            public int maxAttempts() {
                return 3;
            }

            @Override
            public boolean isRetryable(Status status, Metadata trailers) {
                return status.getCode() == Status.Code.UNAVAILABLE;
            }

            @Override
            public Call newCall(CallTarget target) {
                return new Call() {
                    @Override
                    public Decision onFailure(int attemptNumber, Status status, Metadata trailers) {
                        return Decision.retryAfter(Duration.ofSeconds(20));
                    }

                    @Override
                    public void onClose(Status status, int attempts) {
                    }
                };
            }
        };
        ChannelRetryConfig config = ChannelRetryConfig.of("test", new io.github.grpcretry.policy.ServiceConfig(List.of(), null));
        Rpc.Outcome o = Rpc.unary(client(RetryingClientInterceptor.builder(config).eventListener(events)
                .scheduler(scheduler).fallbackRetryDecider(m -> decider)), CallOptions.DEFAULT, "a");

        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(events.ofType("retryScheduled").get(0).nanos()).isEqualTo(30 * MS);
        assertThat(events.delaySources).containsExactly(DelaySource.RETRY_INFO);
    }

    @Test
    void theNativeEngineIgnoresRetryInfoAsADeliberateDifference() throws Exception {
        // RetryInfo asks for 20 s, past the 5 s deadline: ours ends at once; grpc-java retries after its 20 ms backoff
        script = firstFails(retryInfo(Status.Code.UNAVAILABLE, Duration.ofSeconds(20)));
        ChannelRetryConfig config = Configs.channel(FAST);
        CallOptions deadline = CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS);
        Rpc.Outcome ours = Rpc.unary(client(config, new RecordingEvents()), deadline, "a");
        assertThat(ours.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(arrivals).hasSize(1);

        arrivals.clear();
        ManagedChannel nativeChannel = InProcessChannelBuilder.forName(name).directExecutor()
                .defaultServiceConfig(config.serviceConfig().toServiceConfigMap(true)).enableRetry().build();
        channels.add(nativeChannel);
        Rpc.Outcome theirs = Rpc.unary(nativeChannel, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), "a");
        assertThat(theirs.code()).as("grpc-java reads only grpc-retry-pushback-ms").isEqualTo(Status.Code.OK);
        assertThat(arrivals).hasSize(2);
        assertThat(gapMillis()).as("its own backoff, not the server's 20 s").isLessThan(4_000);
    }

    @Test
    void theProtoClassesArePresentInThisBuild() {
        assertThat(io.github.grpcretry.internal.pushback.RetryInfoDelay.available()).isTrue();
        Failure f = retryInfo(Status.Code.UNAVAILABLE, Duration.ofMillis(7));
        assertThat(StatusProto.fromStatusAndTrailers(f.status(), f.trailers())).isNotNull();
    }
}
