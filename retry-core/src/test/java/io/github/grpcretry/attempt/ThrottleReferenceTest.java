package io.github.grpcretry.attempt;

import static io.github.grpcretry.testing.ScriptedServer.Action;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.github.grpcretry.attempt.Engines.Engine;
import io.github.grpcretry.attempt.Engines.Transport;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.CallOptions;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * docs/design.md §17 (R2) (retryThrottling): max-tokens 10, token-ratio 0.1, max-attempts 3, tiny backoff.
 * Deterministic rows exactly; the probabilistic table within ±0.03 arrivals per call and ±2
 * percentage points of final failure, with a seeded server.
 */
class ThrottleReferenceTest {

    private static final RetryThrottlingPolicy THROTTLING = new RetryThrottlingPolicy(10, 0.1);
    private static ScriptedServer server;
    private static RetryScheduler scheduler;

    @BeforeAll
    static void start() throws Exception {
        server = ScriptedServer.start("throttle-reference");
        scheduler = RetryScheduler.create(1, "throttle-reference");
    }

    @AfterAll
    static void stop() {
        server.close();
        assertThat(EngineTestAccess.outstandingTimers(scheduler)).isZero();
        scheduler.close();
    }

    private static ChannelRetryConfig config(boolean throttled) {
        return Configs.channel(Configs.service(Configs.policy(3, 1, 2, 2, Status.Code.UNAVAILABLE),
                throttled ? THROTTLING : null));
    }

    /** Arrivals each call caused, for {@code calls} sequential unary calls. */
    private static List<Integer> perCallArrivals(Engines.Client c, int calls) throws Exception {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            int before = server.arrivalCount();
            Rpc.unary(c.channel(), CallOptions.DEFAULT, "r");
            out.add(server.arrivalCount() - before);
        }
        return out;
    }

    private static Engines.Client client(Engine engine, boolean throttled) {
        return Engines.client(engine, server, Transport.IN_PROCESS, config(throttled), scheduler);
    }

    @Test
    void fortyAlwaysFailingCalls120Unthrottled43Throttled() throws Exception {
        for (Engine engine : Engine.values()) {
            server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
            server.reset();
            try (Engines.Client c = client(engine, false)) {
                List<Integer> seq = perCallArrivals(c, 40);
                assertThat(seq.subList(0, 12)).as(engine.name()).containsExactly(3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3);
                assertThat(server.arrivalCount()).as(engine.name()).isEqualTo(120);
            }
            server.reset();
            try (Engines.Client c = client(engine, true)) {
                List<Integer> seq = perCallArrivals(c, 40);
                assertThat(seq.subList(0, 12)).as(engine.name()).containsExactly(3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
                assertThat(server.arrivalCount()).as(engine.name()).isEqualTo(43);
                if (engine == Engine.INTERCEPTOR) {
                    assertThat(c.interceptor().throttle().tokens()).isZero();
                    assertThat(c.interceptor().throttle().isThrottling()).isTrue();
                    assertThat(c.events().suppressions()).filteredOn(r -> r == SuppressionReason.THROTTLED).hasSize(39); // calls 2..40
                }
            }
        }
    }

    @ParameterizedTest(name = "bucket emptied, {0} successes, one failing call -> {1} arrivals")
    @CsvSource({"0,1", "20,1", "50,1", "60,1", "70,2", "80,3", "100,3"})
    void recoveryThresholds(int successes, int expectedArrivals) throws Exception {
        try (Engines.Client c = client(Engine.INTERCEPTOR, true)) {
            server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
            perCallArrivals(c, 20);
            assertThat(c.interceptor().throttle().tokens()).isZero();
            server.script(a -> Action.ok());
            perCallArrivals(c, successes);
            assertThat(c.interceptor().throttle().tokens()).isEqualTo(Math.min(10.0, successes * 0.1), within(1e-9));
            server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
            assertThat(perCallArrivals(c, 1)).containsExactly(expectedArrivals);
        }
    }

    /**
     * Each attempt fails with probability p (seeded). Reference (grpc-go): arrivals per call and
     * final failure, unthrottled vs throttled.
     */
    @ParameterizedTest(name = "p={0}%: unthrottled {1}/{2}%, throttled {3}/{4}%")
    @CsvSource({
        "5,   1.05, 0.0,   1.05, 0.0",
        "20,  1.23, 0.6,   1.00, 20.0",
        "50,  1.77, 13.0,  1.00, 51.8",
        "100, 3.00, 100.0, 1.00, 100.0"})
    void probabilisticTable(int percent, double unthrottledArrivals, double unthrottledFailure,
            double throttledArrivals, double throttledFailure) throws Exception {
        int calls = 2000;
        for (boolean throttled : new boolean[] {false, true}) {
            Random random = new Random(20240808L + percent);
            server.script(a -> random.nextInt(100) < percent ? Action.fail(Status.Code.UNAVAILABLE) : Action.ok());
            server.reset();
            int failed = 0;
            try (Engines.Client c = client(Engine.INTERCEPTOR, throttled)) {
                for (int i = 0; i < calls; i++) {
                    if (Rpc.unary(c.channel(), CallOptions.DEFAULT, "r").code() != Status.Code.OK) {
                        failed++;
                    }
                }
                if (throttled) {
                    assertThat(c.interceptor().throttle().tokens()).isBetween(0.0, 10.0);
                }
            }
            double arrivalsPerCall = server.arrivalCount() / (double) calls;
            double failurePercent = 100.0 * failed / calls;
            System.out.printf("R2 p=%d%% %s: %.3f arrivals/call, %.2f%% failed%n", percent,
                    throttled ? "throttled" : "unthrottled", arrivalsPerCall, failurePercent);
            assertThat(arrivalsPerCall).as("arrivals per call, throttled=" + throttled)
                    .isCloseTo(throttled ? throttledArrivals : unthrottledArrivals, within(0.03));
            assertThat(failurePercent).as("final failure %, throttled=" + throttled)
                    .isCloseTo(throttled ? throttledFailure : unthrottledFailure, within(2.0));
        }
    }
}
