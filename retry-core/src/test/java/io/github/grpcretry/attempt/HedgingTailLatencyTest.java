package io.github.grpcretry.attempt;

import static io.github.grpcretry.testing.ScriptedServer.Action;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.Engines.Engine;
import io.github.grpcretry.attempt.Engines.Transport;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleResponse;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The tail-latency experiment, as a test of direction. A server on Netty loopback answers 5 % of
 * arrivals after 500 ms and the rest after 5 ms (fixed seed). Without hedging the 99th percentile is
 * the slow answer; with a hedge after 50 ms it is not, and every hedge goes to a call that was still
 * open at its hedging time. Both engines run every configuration and the figures (p50, p99, p99.9,
 * arrivals per call) are printed side by side. At most 10 calls are in flight.
 *
 * <p>Every bound comes from the script or the policy, and a loaded machine (which only adds time)
 * cannot break it: without hedging p99 is at least the slow answer (exact: more than 1 % of the
 * answers are slow); with hedging p99 stays below the slow answer (445 ms above a hedge's fast answer)
 * and the median below the hedging delay; and each call's attempts, counted on the client by a stream
 * tracer ({@link AttemptStreams}: an attempt whose headers went out), are at most one plus the hedging
 * delays that had passed when the call closed (a hedge is only sent to a call still open, so this
 * holds however late the timers fire).
 */
class HedgingTailLatencyTest {

    private static final int CALLS = 1500;
    private static final int WARM_UP = 100;
    private static final int IN_FLIGHT = 10;
    private static final long SLOW_MS = 500;
    private static final long FAST_MS = 5;
    private static final long HEDGING_DELAY_MS = 50;

    /** One measured configuration under one engine. */
    record Figures(String engine, String config, double p50, double p99, double p999, double load,
            int slowAnswers, List<String> unjustifiedHedges) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%-12s %-22s %8.1f %8.1f %8.1f %8.3f", engine, config, p50, p99, p999,
                    load);
        }
    }

    /** Each call's latency and its attempts (streams the client opened, transparent retries aside). */
    private record CallRecords(long[] latencyNanos, AtomicInteger[] attempts) {
    }

    @Test
    void hedgingCutsTheTailForLittleExtraLoad() throws Exception {
        Map<String, ServiceConfig> configs = new LinkedHashMap<>();
        configs.put("no hedging", new ServiceConfig(List.of(), null));
        configs.put("hedging 2 x 50ms", Configs.hedged(Configs.hedging(2, HEDGING_DELAY_MS, Status.Code.UNAVAILABLE)));
        configs.put("hedging 3 x 50ms", Configs.hedged(Configs.hedging(3, HEDGING_DELAY_MS, Status.Code.UNAVAILABLE)));
        List<Figures> all = new ArrayList<>();
        try (ScriptedServer server = ScriptedServer.startNetty();
                RetryScheduler scheduler = RetryScheduler.create(2, "tail-latency")) {
            for (Map.Entry<String, ServiceConfig> c : configs.entrySet()) {
                int maxAttempts = c.getValue().methodConfigs().isEmpty() ? 1
                        : c.getValue().methodConfigs().get(0).hedgingPolicy().maxAttempts();
                for (Engine engine : Engine.values()) {
                    all.add(measure(server, scheduler, engine, c.getKey(), Configs.channel(c.getValue()), maxAttempts));
                }
            }
            assertThat(EngineTestAccess.outstandingTimers(scheduler)).isZero();
        }
        System.out.println(String.format(Locale.ROOT, "%-12s %-22s %8s %8s %8s %8s", "engine", "config", "p50 ms",
                "p99 ms", "p99.9 ms", "load"));
        all.forEach(System.out::println);
        for (Figures f : all) {
            assertThat(f.unjustifiedHedges()).as(f + ": calls with more attempts than hedging delays passed before"
                    + " they closed").isEmpty();
            if (f.config().equals("no hedging")) {
                assertThat(f.slowAnswers()).as(f + ": slow answers (the seed's share, more than 1 %)")
                        .isGreaterThan(CALLS / 100);
                assertThat(f.p99()).as(f + ": p99 without hedging is the slow answer").isGreaterThanOrEqualTo(SLOW_MS);
                assertThat(f.load()).as(f + ": one arrival per call").isEqualTo(1.0);
            } else {
                assertThat(f.p99()).as(f + ": p99 with hedging is not the slow answer").isLessThan(SLOW_MS);
                assertThat(f.p50()).as(f + ": the median call is answered before a hedge is due")
                        .isLessThan(HEDGING_DELAY_MS);
                assertThat(f.load()).as(f + ": hedges went out").isGreaterThan(1.0);
            }
        }
    }

    private static Figures measure(ScriptedServer server, RetryScheduler scheduler, Engine engine, String name,
            ChannelRetryConfig config, int maxAttempts) throws Exception {
        Random random = new Random(5);
        AtomicInteger slowAnswers = new AtomicInteger();
        server.script(a -> {
            boolean slow;
            synchronized (random) {
                slow = random.nextInt(100) < 5;
            }
            if (slow) {
                slowAnswers.incrementAndGet();
            }
            return Action.ok().delay(slow ? SLOW_MS : FAST_MS);
        });
        CallRecords records;
        int slow;
        try (Engines.Client client = Engines.client(engine, server, Transport.NETTY, config, scheduler)) {
            run(client.channel(), WARM_UP);
            server.reset();
            slowAnswers.set(0);
            records = run(client.channel(), CALLS);
            slow = slowAnswers.get();
        }
        // the channel has terminated: no attempt can start any more, so the per-call counts are final;
        // arrivals still in transit to the server when the channel shut down are not in the load figure
        double load = (double) server.arrivalCount() / CALLS;
        List<String> unjustified = new ArrayList<>();
        long delay = TimeUnit.MILLISECONDS.toNanos(HEDGING_DELAY_MS);
        long[] latencies = new long[CALLS];
        for (int i = 0; i < CALLS; i++) {
            latencies[i] = records.latencyNanos()[i];
            int attempts = records.attempts()[i].get();
            long allowed = 1 + Math.min(maxAttempts - 1, latencies[i] / delay);
            if (attempts > allowed || attempts < 1) {
                unjustified.add(String.format(Locale.ROOT, "call %d: %d attempts in %.1f ms", i, attempts,
                        latencies[i] / 1e6));
            }
        }
        Arrays.sort(latencies);
        return new Figures(engine.name().toLowerCase(Locale.ROOT), name, millis(latencies, 0.50),
                millis(latencies, 0.99), millis(latencies, 0.999), load, slow, unjustified);
    }

    /**
     * {@code calls} unary calls, at most {@link #IN_FLIGHT} at a time; the latency of each and the
     * attempts counted by a stream tracer on its CallOptions (final once the channel has terminated).
     */
    private static CallRecords run(Channel channel, int calls) throws InterruptedException {
        Semaphore slots = new Semaphore(IN_FLIGHT);
        CountDownLatch done = new CountDownLatch(calls);
        long[] latencies = new long[calls];
        AtomicInteger[] attempts = new AtomicInteger[calls];
        ConcurrentLinkedQueue<Status> failures = new ConcurrentLinkedQueue<>();
        for (int i = 0; i < calls; i++) {
            slots.acquire();
            int index = i;
            // counts the call's attempts that went out (headers sent), transparent retries aside
            AttemptStreams counter = new AttemptStreams();
            attempts[i] = counter.opened;
            long start = System.nanoTime();
            ClientCall<io.grpc.testing.protobuf.SimpleRequest, SimpleResponse> call = channel.newCall(Rpc.UNARY,
                    CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS).withStreamTracerFactory(counter));
            call.start(new ClientCall.Listener<>() {
                @Override
                public void onClose(Status status, Metadata trailers) {
                    latencies[index] = System.nanoTime() - start;
                    if (!status.isOk()) {
                        failures.add(status);
                    }
                    slots.release();
                    done.countDown();
                }
            }, new Metadata());
            call.request(1);
            call.sendMessage(Rpc.request("q" + i));
            call.halfClose();
        }
        assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
        assertThat(failures).as("failed calls").isEmpty();
        return new CallRecords(latencies, attempts);
    }

    private static double millis(long[] sorted, double quantile) {
        int i = (int) Math.ceil(quantile * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))] / 1e6;
    }
}
