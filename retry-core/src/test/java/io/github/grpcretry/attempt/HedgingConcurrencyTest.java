package io.github.grpcretry.attempt;

import static io.github.grpcretry.testing.ScriptedServer.Action;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.Engines.Transport;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Hedged calls under load: many threads on one channel, four attempts 5 ms apart, with fast and slow
 * answers, non-fatal and fatal failures, pushback, commits by headers and by buffer limits,
 * cancellations at random moments and short deadlines, over all four RPC types. Afterwards: no timer
 * outstanding, no buffered byte held, every listener closed exactly once with the call contract kept
 * (serial callbacks, none after the close), every call and every attempt reported ended, and no
 * attempt still running on the server (each was answered or cancelled).
 */
class HedgingConcurrencyTest {

    private static final int THREADS = 12;
    private static final int CALLS_PER_THREAD = 60;

    @ParameterizedTest
    @EnumSource(Transport.class)
    void hedgedLoadLeavesNothingBehind(Transport transport) throws Exception {
        ScriptedServer server = transport == Transport.IN_PROCESS
                ? ScriptedServer.start("hedging-concurrency-" + System.nanoTime()) : ScriptedServer.startNetty();
        RetryScheduler scheduler = RetryScheduler.create(2, "hedging-concurrency");
        Random serverRandom = new Random(11);
        server.script(a -> {
            int r;
            synchronized (serverRandom) {
                r = serverRandom.nextInt(100);
            }
            if (r < 25) {
                return Action.fail(Status.Code.UNAVAILABLE);
            } else if (r < 33) {
                return Action.failOnHalfClose(Status.Code.UNAVAILABLE);
            } else if (r < 37) {
                return Action.fail(Status.Code.INTERNAL).delay(r % 7);
            } else if (r < 41) {
                return Action.fail(Status.Code.UNAVAILABLE).headersFirst();
            } else if (r < 44) {
                return Action.fail(Status.Code.UNAVAILABLE).pushback("3");
            } else if (r < 46) {
                return Action.fail(Status.Code.UNAVAILABLE).pushback("-1");
            } else if (r < 66) {
                return Action.ok().delay(2 + r % 25);
            } else if (r < 69) {
                return Action.ok().responses(2).thenFail(Status.Code.UNAVAILABLE);
            }
            return Action.ok();
        });
        ChannelRetryConfig config = Configs.channel(
                Configs.hedged(Configs.hedging(4, 5, Status.Code.UNAVAILABLE), new RetryThrottlingPolicy(1000, 1.0)),
                48 * 1024, 160 * 1024, null);
        Engines.Client client = Engines.interceptorClient(server, transport, config, scheduler);
        CallbackExecutor callbacks = new CallbackExecutor();
        try {
            MixedLoad load = MixedLoad.run(client, callbacks, THREADS, CALLS_PER_THREAD, 2000, true);
            load.assertNothingLeft(scheduler, client, callbacks);
            Map<Status.Code, Integer> codes = load.codes;
            // over Netty a cancellation reaches the server after the client's close: wait for the server's record
            RetryEngineTest.waitFor(() -> server.arrivals().stream().allMatch(a -> a.closedByServer || a.cancelled));
            List<Integer> running = new ArrayList<>();
            for (Arrival a : server.arrivals()) {
                if (!a.closedByServer && !a.cancelled) {
                    running.add(a.index);
                }
            }
            assertThat(running).as("attempts still running on the server").isEmpty();
            int hedges = 0;
            for (int h : client.events().hedgesPerCall) {
                hedges += h;
            }
            System.out.printf("hedging concurrency %s: codes %s, attempts %d (hedges %d), arrivals %d, suppressed %s%n",
                    transport, codes, client.events().attemptsStarted.get(), hedges, server.arrivalCount(),
                    client.events().suppressions().stream().distinct().toList());
            assertThat(hedges).as("hedges sent").isGreaterThan(THREADS * CALLS_PER_THREAD / 10);
            assertThat(codes).containsKeys(Status.Code.OK, Status.Code.UNAVAILABLE, Status.Code.CANCELLED,
                    Status.Code.INTERNAL);
        } finally {
            callbacks.close();
            client.close();
            server.close();
            scheduler.close();
        }
    }
}
