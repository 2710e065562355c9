package io.github.grpcretry.attempt;

import static io.github.grpcretry.testing.ScriptedServer.Action;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.Engines.Transport;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.Status;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Many threads on one channel, with failures, pushback, commits by headers and by buffer limits,
 * cancellations at random moments and short deadlines mixed. Afterwards: no timer outstanding, no
 * buffered byte held, the throttle within [0, max], every listener closed exactly once with the
 * call contract kept, and every logical call reported ended exactly once.
 */
class ConcurrencyTest {

    private static final int THREADS = 12;
    private static final int CALLS_PER_THREAD = 80;

    @ParameterizedTest
    @EnumSource(Transport.class)
    void mixedLoadLeavesNothingBehind(Transport transport) throws Exception {
        ScriptedServer server = transport == Transport.IN_PROCESS
                ? ScriptedServer.start("concurrency-" + System.nanoTime()) : ScriptedServer.startNetty();
        RetryScheduler scheduler = RetryScheduler.create(2, "concurrency");
        Random serverRandom = new Random(7);
        server.script(a -> {
            int r;
            synchronized (serverRandom) {
                r = serverRandom.nextInt(100);
            }
            if (r < 30) {
                return Action.fail(Status.Code.UNAVAILABLE);
            } else if (r < 40) {
                return Action.failOnHalfClose(Status.Code.UNAVAILABLE);
            } else if (r < 45) {
                return Action.fail(Status.Code.UNAVAILABLE).headersFirst();
            } else if (r < 48) {
                return Action.fail(Status.Code.UNAVAILABLE).pushback("3");
            } else if (r < 50) {
                return Action.fail(Status.Code.UNAVAILABLE).pushback("-1");
            } else if (r < 60) {
                return Action.ok().delay(5 + r % 20);
            } else if (r < 63) {
                return Action.ok().responses(2).thenFail(Status.Code.UNAVAILABLE);
            }
            return Action.ok();
        });
        ChannelRetryConfig config = Configs.channel(
                Configs.service(Configs.policy(4, 2, 20, 2, Status.Code.UNAVAILABLE), new RetryThrottlingPolicy(1000, 1.0)),
                48 * 1024, 160 * 1024, null);
        Engines.Client client = Engines.interceptorClient(server, transport, config, scheduler);
        CallbackExecutor callbacks = new CallbackExecutor();
        try {
            MixedLoad load = MixedLoad.run(client, callbacks, THREADS, CALLS_PER_THREAD, 1000, false);
            load.assertNothingLeft(scheduler, client, callbacks);
            Map<Status.Code, Integer> codes = load.codes;
            double tokens = client.interceptor().throttle().tokens();
            assertThat(tokens).isBetween(0.0, 1000.0);
            System.out.printf("concurrency %s: codes %s, attempts %d, arrivals %d, tokens %.1f%n", transport, codes,
                    client.events().attemptsStarted.get(), server.arrivalCount(), tokens);
            assertThat(codes).containsKeys(Status.Code.OK, Status.Code.UNAVAILABLE, Status.Code.CANCELLED);
        } finally {
            callbacks.close();
            client.close();
            server.close();
            scheduler.close();
        }
    }
}
