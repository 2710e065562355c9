package io.github.grpcretry.attempt;

import static io.github.grpcretry.testing.ScriptedServer.Action;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The engine's {@link RetryDecider} SPI against a real in-process server: a method without a policy of
 * its own is retried as the fallback decider says, while commitment, pushback, the cap, the throttle,
 * the budget and the deadline still apply, and the decider hears of every decided failure and of every
 * call's end exactly once.
 */
class RetryDeciderEngineTest {

    private ScriptedServer server;
    private RetryScheduler scheduler;
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final List<RetryingClientInterceptor> engines = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        server = ScriptedServer.start("decider-" + System.nanoTime());
        scheduler = RetryScheduler.create(1, "decider-retry");
    }

    @AfterEach
    void tearDown() throws Exception {
        for (ManagedChannel c : channels) {
            c.shutdownNow();
            c.awaitTermination(5, TimeUnit.SECONDS);
        }
        for (RetryingClientInterceptor e : engines) {
            assertThat(EngineTestAccess.bufferPool(e).used()).as("bytes held after the test").isZero();
        }
        assertThat(EngineTestAccess.outstandingTimers(scheduler)).as("timers outstanding after the test").isZero();
        scheduler.close();
        server.close();
    }

    /**
     * A decider that retries UNAVAILABLE up to {@code maxAttempts} with a fixed delay, and records what
     * the engine told it.
     */
    static final class ScriptedDecider implements RetryDecider {
        final int maxAttempts;
        final long delayMillis;
        final ConcurrentLinkedQueue<String> log = new ConcurrentLinkedQueue<>();
        final AtomicInteger calls = new AtomicInteger();
        final AtomicInteger closes = new AtomicInteger();

        ScriptedDecider(int maxAttempts, long delayMillis) {
            this.maxAttempts = maxAttempts;
            this.delayMillis = delayMillis;
        }

        @Override
        public int maxAttempts() {
            return maxAttempts;
        }

        @Override
        public boolean isRetryable(Status status, Metadata trailers) {
            return status.getCode() == Status.Code.UNAVAILABLE;
        }

        @Override
        public Call newCall(CallTarget target) {
            calls.incrementAndGet();
            return new Call() {
                @Override
                public Decision onFailure(int attemptNumber, Status status, Metadata trailers) {
                    log.add("failure " + attemptNumber + " " + status.getCode());
                    if (!isRetryable(status, trailers)) {
                        return Decision.notRetryable();
                    }
                    return attemptNumber >= maxAttempts ? Decision.exhausted()
                            : Decision.retryAfter(Duration.ofMillis(delayMillis));
                }

                @Override
                public void onClose(Status status, int attempts) {
                    closes.incrementAndGet();
                    log.add("close " + status.getCode() + " after " + attempts);
                }
            };
        }
    }

    private ManagedChannel channel(ChannelRetryConfig config, Function<MethodDescriptor<?, ?>, RetryDecider> fallback,
            RecordingEvents events, RetryThrottle throttle, RetryBudget budget) {
        RetryingClientInterceptor engine = RetryingClientInterceptor.builder(config)
                .fallbackRetryDecider(fallback)
                .eventListener(events)
                .throttle(throttle)
                .budget(budget)
                .scheduler(scheduler)
                .build();
        engines.add(engine);
        ManagedChannel ch = InProcessChannelBuilder.forName(server.inProcessName()).intercept(engine).build();
        channels.add(ch);
        return ch;
    }

    private ManagedChannel channel(ChannelRetryConfig config, RetryDecider decider, RecordingEvents events) {
        return channel(config, m -> decider, events, null, null);
    }

    private static ChannelRetryConfig noPolicies() {
        return ChannelRetryConfig.of("test", new ServiceConfig(List.of(), null));
    }

    @Test
    void aMethodWithoutPolicyIsRetriedAsTheDeciderSays() throws Exception {
        server.script(ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE));
        ScriptedDecider decider = new ScriptedDecider(4, 150);
        RecordingEvents events = new RecordingEvents();

        Rpc.Outcome out = Rpc.unary(channel(noPolicies(), decider, events), CallOptions.DEFAULT, "a");

        assertThat(out.code()).isEqualTo(Status.Code.OK);
        List<Arrival> arrivals = server.arrivals();
        assertThat(arrivals).extracting(a -> a.previousAttempts).containsExactly(null, 1, 2);
        for (int i = 1; i < arrivals.size(); i++) {
            long gapMs = TimeUnit.NANOSECONDS.toMillis(arrivals.get(i).nanoTime - arrivals.get(i - 1).nanoTime);
            assertThat(gapMs).as("gap before attempt %d", i + 1).isBetween(140L, 1500L);
        }
        assertThat(decider.log).containsExactly("failure 1 UNAVAILABLE", "failure 2 UNAVAILABLE", "close OK after 3");
        assertThat(events.ofType("retryScheduled")).extracting(RecordingEvents.Event::nanos)
                .containsOnly(TimeUnit.MILLISECONDS.toNanos(150));
        assertThat(events.suppressions()).isEmpty();
    }

    @Test
    void notRetryableAndExhaustedEndTheCallWithTheirReasons() throws Exception {
        ScriptedDecider decider = new ScriptedDecider(3, 10);
        RecordingEvents events = new RecordingEvents();
        ManagedChannel ch = channel(noPolicies(), decider, events);

        server.script(ScriptedServer.always(Status.Code.INVALID_ARGUMENT));
        assertThat(Rpc.unary(ch, CallOptions.DEFAULT, "a").code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(events.suppressions()).containsExactly(SuppressionReason.NON_RETRYABLE_STATUS);

        server.reset();
        events.clear();
        decider.log.clear();
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        assertThat(Rpc.unary(ch, CallOptions.DEFAULT, "b").code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).isEqualTo(3);
        assertThat(events.suppressions()).containsExactly(SuppressionReason.MAX_ATTEMPTS);
        assertThat(decider.log).containsExactly("failure 1 UNAVAILABLE", "failure 2 UNAVAILABLE",
                "failure 3 UNAVAILABLE", "close UNAVAILABLE after 3");
    }

    @Test
    void theChannelCapLimitsTheDecidersAttempts() throws Exception {
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        ScriptedDecider decider = new ScriptedDecider(10, 5);
        RecordingEvents events = new RecordingEvents();
        ChannelRetryConfig capped = ChannelRetryConfig.of("test", new ServiceConfig(List.of(), null)).withMaxAttemptsCap(3);

        assertThat(Rpc.unary(channel(capped, decider, events), CallOptions.DEFAULT, "a").code())
                .isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).isEqualTo(3);
        assertThat(events.suppressions()).containsExactly(SuppressionReason.MAX_ATTEMPTS);
    }

    @Test
    void responseHeadersCommitTheCall() throws Exception {
        server.script(a -> Action.fail(Status.Code.UNAVAILABLE).headersFirst());
        ScriptedDecider decider = new ScriptedDecider(4, 10);
        RecordingEvents events = new RecordingEvents();

        Rpc.Outcome out = Rpc.unary(channel(noPolicies(), decider, events), CallOptions.DEFAULT, "a");

        assertThat(out.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(events.suppressions()).containsExactly(SuppressionReason.COMMITTED);
        assertThat(decider.log).containsExactly("close UNAVAILABLE after 1");
    }

    @Test
    void pushbackStopEndsUnaskedAndPushbackDelayReplacesDelay() throws Exception {
        ScriptedDecider decider = new ScriptedDecider(4, 2000);
        RecordingEvents events = new RecordingEvents();
        ManagedChannel ch = channel(noPolicies(), decider, events);

        server.script(a -> Action.fail(Status.Code.UNAVAILABLE).pushback("-1"));
        assertThat(Rpc.unary(ch, CallOptions.DEFAULT, "a").code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(events.suppressions()).containsExactly(SuppressionReason.PUSHBACK);
        assertThat(decider.log).containsExactly("close UNAVAILABLE after 1");

        server.reset();
        events.clear();
        decider.log.clear();
        server.script(a -> a.index == 1 ? Action.fail(Status.Code.UNAVAILABLE).pushback("100") : Action.ok());
        Rpc.Outcome out = Rpc.unary(ch, CallOptions.DEFAULT, "b");
        assertThat(out.code()).isEqualTo(Status.Code.OK);
        assertThat(out.elapsedMillis()).as("pushback 100 ms, not the decider's 2 s").isBetween(90L, 1500L);
        assertThat(decider.log).containsExactly("failure 1 UNAVAILABLE", "close OK after 2");
    }

    @Test
    void theDeadlineTheThrottleAndTheBudgetStillRefuse() throws Exception {
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));

        // deadline: a 1 s delay does not fit into a 300 ms deadline
        RecordingEvents events = new RecordingEvents();
        ManagedChannel ch = channel(noPolicies(), new ScriptedDecider(4, 1000), events);
        assertThat(Rpc.unary(ch, CallOptions.DEFAULT.withDeadlineAfter(300, TimeUnit.MILLISECONDS), "a").code())
                .isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(events.suppressions()).containsExactly(SuppressionReason.DEADLINE);

        // throttle: 3 tokens, threshold 1.5; a retryable failure costs one token: 3 -> 2 (retry), 2 -> 1 (refused)
        server.reset();
        RecordingEvents throttled = new RecordingEvents();
        RetryThrottle throttle = new RetryThrottle(new RetryThrottlingPolicy(3, 0.1));
        ManagedChannel t = channel(noPolicies(), m -> new ScriptedDecider(4, 5), throttled, throttle, null);
        assertThat(Rpc.unary(t, CallOptions.DEFAULT, "b").code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).isEqualTo(2);
        assertThat(throttled.suppressions()).containsExactly(SuppressionReason.THROTTLED);
        assertThat(throttle.tokens()).isEqualTo(1.0);

        // budget: no floor, 0 % of calls -> no retry at all
        server.reset();
        RecordingEvents budgeted = new RecordingEvents();
        RetryBudget budget = new RetryBudget(new RetryBudgetPolicy(0.0, 0, Duration.ofSeconds(10)));
        ManagedChannel b = channel(noPolicies(), m -> new ScriptedDecider(4, 5), budgeted, null, budget);
        assertThat(Rpc.unary(b, CallOptions.DEFAULT, "c").code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(budgeted.suppressions()).containsExactly(SuppressionReason.BUDGET);
    }

    @Test
    void aMethodsOwnPolicyWinsAndANullFallbackPassesThrough() throws Exception {
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        ScriptedDecider decider = new ScriptedDecider(5, 5);
        MethodConfig unaryOnly = new MethodConfig(List.of(MethodName.of(Configs.SERVICE, "UnaryRpc")), null, null, null,
                null, Configs.fast(2), null);
        ChannelRetryConfig config = ChannelRetryConfig.of("test", new ServiceConfig(List.of(unaryOnly), null));
        RecordingEvents events = new RecordingEvents();
        ManagedChannel ch = channel(config,
                m -> m.getBareMethodName().equals("ClientStreamingRpc") ? decider : null, events, null, null);

        assertThat(Rpc.unary(ch, CallOptions.DEFAULT, "a").code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).as("UnaryRpc: its own policy, 2 attempts").isEqualTo(2);
        assertThat(decider.calls.get()).isZero();

        server.reset();
        server.script(a -> Action.failOnHalfClose(Status.Code.UNAVAILABLE));
        assertThat(Rpc.clientStreaming(ch, CallOptions.DEFAULT, "x", "y").code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).as("ClientStreamingRpc: the decider, 5 attempts").isEqualTo(5);
        assertThat(server.arrivals()).allSatisfy(a -> assertThat(a.messages).containsExactly("x", "y"));

        server.reset();
        assertThat(Rpc.serverStreaming(ch, CallOptions.DEFAULT, "s").code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).as("ServerStreamingRpc: no decider, passed through").isEqualTo(1);

        server.reset();
        assertThat(Rpc.clientStreaming(ch, CallOptions.DEFAULT.withOption(GrpcRetryCallOptions.DISABLE, true), "z")
                .code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).as("DISABLE wins over the decider").isEqualTo(1);
        assertThat(decider.calls.get()).isEqualTo(1);
        assertThat(decider.closes.get()).isEqualTo(1);
    }

    @Test
    void aCallCancelledWhileWaitingIsClosedOnceForTheDecider() throws Exception {
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        ScriptedDecider decider = new ScriptedDecider(4, 5000);
        RecordingEvents events = new RecordingEvents();
        Rpc.Handle h = Rpc.start(channel(noPolicies(), decider, events), Rpc.UNARY, CallOptions.DEFAULT).send("a");
        h.call.halfClose();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (decider.log.isEmpty() && System.nanoTime() < until) {
            Thread.sleep(5); // polls for the decider's first call (the event), not a synchronisation point
        }
        h.call.cancel("stop", null);
        assertThat(h.await().code()).isEqualTo(Status.Code.CANCELLED);
        assertThat(decider.log).containsExactly("failure 1 UNAVAILABLE", "close CANCELLED after 1");
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(Set.copyOf(events.suppressions())).isEmpty();
    }
}
