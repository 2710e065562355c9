package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.internal.backends.TriedBackends;
import io.github.grpcretry.internal.backends.TriedBackendsLoadBalancerProvider;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.testing.Backends;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.SimpleCalls;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Retries and hedges across three Netty backends on 127.0.0.1 behind one name (round_robin under the starter's
 * policy, as the Boot lines set it up) with 8 concurrent callers: where each call's attempts went is read from the
 * servers' records (the call's id header, {@code grpc-previous-rpc-attempts}).
 */
class TriedBackendsNettyTest {

    private static final int CALLERS = 8;

    private Backends backends;
    private ManagedChannel channel;

    @AfterEach
    void close() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (backends != null) {
            backends.close();
        }
    }

    @Test
    void noRetryGoesBackToTheBackendThatFailedItAndNoCallFails() throws Exception {
        backends = Backends.start(3);
        backends.server(0).script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        Reuses reuses = new Reuses();
        channel = channel(Configs.channel(Configs.policy(3, 1, 2, 2, Status.Code.UNAVAILABLE)), reuses);
        backends.warmUp(channel, 3);

        Backends.Outcome outcome = Backends.run(channel, "on", CALLERS, 40, -1, () -> { });

        Map<String, List<Integer>> attempts = backends.attemptsByCall();
        System.out.printf("avoidance on: %d calls, %d retries, %d to a tried backend, %d failed%n", attempts.size(),
                Backends.later(attempts), Backends.sentToTried(attempts), outcome.failedCalls());
        assertThat(outcome.failures()).isEmpty();
        assertThat(Backends.later(attempts)).as("retries (the failing backend's share of first attempts)")
                .isGreaterThan(40);
        assertThat(Backends.sentToTried(attempts)).as("retries sent to a backend the call had tried").isZero();
        assertThat(reuses.count).isEmpty();
    }

    @Test
    void withAvoidanceOffRetriesGoBackToTheFailedBackendAsBefore() throws Exception {
        backends = Backends.start(3);
        backends.server(0).script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        channel = channel(Configs.channel(Configs.policy(3, 1, 2, 2, Status.Code.UNAVAILABLE))
                .withTriedBackends(false, ChannelRetryConfig.DEFAULT_BACKEND_PICKS), new Reuses());
        backends.warmUp(channel, 3);

        Backends.Outcome outcome = Backends.run(channel, "off", CALLERS, 60, -1, () -> { });
        Map<String, List<Integer>> attempts = backends.attemptsByCall();
        System.out.printf("avoidance off: %d calls, %d retries, %d to a tried backend, %d failed%n", attempts.size(),
                Backends.later(attempts), Backends.sentToTried(attempts), outcome.failedCalls());

        // round_robin's index moves between a call's attempts under concurrent load: some retries land where the
        // call failed (thread interleaving decides how many; at least one in 480 calls)
        assertThat(Backends.sentToTried(attempts)).isPositive();
    }

    @Test
    void aBackendGoingDownAndAnotherComingUpMidRunFailNoCallAndTakeNoRetryBack() throws Exception {
        backends = Backends.start(3);
        backends.server(0).script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        Reuses reuses = new Reuses();
        channel = channel(Configs.channel(Configs.policy(3, 1, 2, 2, Status.Code.UNAVAILABLE)), reuses);
        backends.warmUp(channel, 3);
        int fourth = backends.add();

        Backends.Outcome outcome = Backends.run(channel, "churn", CALLERS, 40, 100, () -> {
            backends.server(2).shutdownGracefully(5_000); // down in the middle of the run (GOAWAY; an abrupt kill
            // resets the calls in flight with CANCELLED, which the policy does not retry)
            try {
                backends.resolve(0, 1, fourth); // and a new one resolved in its place
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });

        Map<String, List<Integer>> attempts = backends.attemptsByCall();
        assertThat(outcome.failures()).isEmpty();
        // while one backend drains and its replacement connects, a retry may find no untried backend ready (or
        // spend its picks on tried ones while other callers move round_robin's index): it goes back, and is
        // counted with its reason, never silently; in a steady run that is none (the test above)
        int back = Backends.sentToTried(attempts);
        int counted = reuses.count.values().stream().mapToInt(Integer::intValue).sum();
        assertThat(back).as("retries back on a tried backend (counted: " + reuses.count + ")")
                .isLessThanOrEqualTo(counted).isLessThanOrEqualTo(Math.max(2, Backends.later(attempts) / 20));
        assertThat(backends.server(fourth).arrivalCount()).as("the new backend takes calls").isPositive();
    }

    @Test
    void withOneBackendRetriesStillGoThereAndAreCountedAsNoOtherReady() throws Exception {
        backends = Backends.start(1);
        backends.server(0).script(a -> a.previousAttempts == null || a.previousAttempts < 2
                ? ScriptedServer.Action.fail(Status.Code.UNAVAILABLE) : ScriptedServer.Action.ok());
        Reuses reuses = new Reuses();
        channel = channel(Configs.channel(Configs.policy(3, 1, 2, 2, Status.Code.UNAVAILABLE)), reuses);

        Backends.Outcome outcome = Backends.run(channel, "single", CALLERS, 10, -1, () -> { });

        assertThat(outcome.failures()).isEmpty();
        Map<String, List<Integer>> attempts = backends.attemptsByCall();
        assertThat(attempts).hasSize(CALLERS * 10).allSatisfy((call, where) -> assertThat(where).containsExactly(0, 0, 0));
        assertThat(reuses.count).containsExactly(Map.entry(TriedBackends.NO_OTHER_READY, CALLERS * 10 * 2));
    }

    @Test
    void whileTwoBackendsAreReadyNoHedgeGoesToTheBackendOfAPendingAttempt() throws Exception {
        backends = Backends.start(3);
        backends.server(0).script(a -> a.header(SimpleCalls.CALL_ID.name()) != null
                && a.header(SimpleCalls.CALL_ID.name()).startsWith("warm") ? ScriptedServer.Action.ok()
                : ScriptedServer.Action.ok().delay(400));
        channel = channel(Configs.channel(Configs.hedged(Configs.hedging(3, 30, Status.Code.UNAVAILABLE))), new Reuses());
        backends.warmUp(channel, 3);

        Backends.Outcome outcome = Backends.run(channel, "hedge", 6, 12, -1, () -> { });

        Map<String, List<Integer>> attempts = backends.attemptsByCall();
        System.out.printf("hedging: %d calls, %d hedges, %d to a pending attempt's backend, %d failed%n",
                attempts.size(), Backends.later(attempts), Backends.sentToTried(attempts), outcome.failedCalls());
        assertThat(outcome.failures()).isEmpty();
        assertThat(Backends.later(attempts)).as("hedges (after the slow backend's first attempts)").isGreaterThan(10);
        assertThat(Backends.sentToTried(attempts)).as("hedges sent to the backend of a pending attempt").isZero();
    }

    private ManagedChannel channel(ChannelRetryConfig config, RetryEventListener events) {
        return Grpc.newChannelBuilder(backends.target(), InsecureChannelCredentials.create())
                .defaultServiceConfig(TriedBackendsLoadBalancerProvider.wrap(Map.of(), "round_robin"))
                .intercept(RetryingClientInterceptor.builder(config).eventListener(events).build())
                .build();
    }

    /** Counts {@code backendReused} by reason. */
    static final class Reuses implements RetryEventListener {
        final Map<String, Integer> count = new ConcurrentHashMap<>();
        final AtomicInteger events = new AtomicInteger();

        @Override
        public void backendReused(CallTarget target, AttemptKind kind, int attemptNumber, String reason) {
            count.merge(reason, 1, Integer::sum);
        }
    }
}
