package io.github.grpcretry.attempt;

import static io.github.grpcretry.testing.ScriptedServer.Action;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.Engines.Transport;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
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
        ConcurrentLinkedQueue<ContractListener<SimpleResponse>> listeners = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        Map<Status.Code, Integer> codes = new EnumMap<>(Status.Code.class);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        CallbackExecutor callbacks = new CallbackExecutor();
        CountDownLatch done = new CountDownLatch(THREADS);
        List<MethodDescriptor<SimpleRequest, SimpleResponse>> methods =
                List.of(Rpc.UNARY, Rpc.CLIENT_STREAMING, Rpc.SERVER_STREAMING, Rpc.BIDI);
        try {
            for (int t = 0; t < THREADS; t++) {
                long seed = 2000 + t;
                pool.execute(() -> {
                    Random random = new Random(seed);
                    try {
                        for (int i = 0; i < CALLS_PER_THREAD; i++) {
                            MethodDescriptor<SimpleRequest, SimpleResponse> m = methods.get(random.nextInt(4));
                            int mode = random.nextInt(10);
                            CallOptions options = (mode == 0
                                    ? CallOptions.DEFAULT.withDeadlineAfter(1 + random.nextInt(30), TimeUnit.MILLISECONDS)
                                    : CallOptions.DEFAULT).withExecutor(callbacks);
                            Rpc.Handle h = Rpc.start(client.channel(), m, options);
                            listeners.add(h.listener);
                            int messages = m.getType().clientSendsOneMessage() ? 1 : 1 + random.nextInt(4);
                            for (int k = 0; k < messages; k++) {
                                if (random.nextInt(8) == 0) {
                                    h.sendBytes(20 * 1024);
                                } else {
                                    h.send("m" + k);
                                }
                                if (random.nextInt(4) == 0) {
                                    Thread.sleep(random.nextInt(8)); // hedges start while messages still come
                                }
                                h.call.isReady();
                            }
                            if (mode == 1) {
                                Thread.sleep(random.nextInt(15)); // a random moment to cancel at, not a wait for anything
                                h.call.cancel("random cancel", null);
                            } else {
                                h.halfClose();
                                if (mode == 2) {
                                    Thread.sleep(random.nextInt(15)); // a random moment to cancel at
                                    h.call.cancel("cancel after half-close", null);
                                }
                            }
                            Status s = h.listener.awaitClose(20, TimeUnit.SECONDS);
                            synchronized (codes) {
                                codes.merge(s.getCode(), 1, Integer::sum);
                            }
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    } finally {
                        done.countDown();
                    }
                });
            }
            assertThat(done.await(120, TimeUnit.SECONDS)).as("all threads finished").isTrue();
            assertThat(errors).as("errors in client threads").isEmpty();
            RetryEngineTest.waitFor(() -> scheduler.outstandingTimers() == 0);
            RetryEngineTest.waitFor(() -> client.events().attemptsEnded.get() == client.events().attemptsStarted.get());
            // nothing live in the engine any more: once no callback is queued or running, a late second
            // close would have been seen
            RetryEngineTest.waitFor(callbacks::idle);
            List<String> broken = new ArrayList<>();
            for (ContractListener<SimpleResponse> l : listeners) {
                try {
                    l.assertContract();
                } catch (AssertionError e) {
                    broken.add(e.getMessage());
                }
            }
            assertThat(broken).as("call contract").isEmpty();
            assertThat(listeners).hasSize(THREADS * CALLS_PER_THREAD);
            assertThat(client.interceptor().bufferPool().used()).as("bytes held").isZero();
            assertThat(client.events().callsEnded.get()).isEqualTo(client.events().callsStarted.get())
                    .isEqualTo(THREADS * CALLS_PER_THREAD);
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
            pool.shutdownNow();
            callbacks.close();
            client.close();
            server.close();
            scheduler.close();
        }
    }
}
