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
import org.junit.jupiter.api.Test;

/**
 * The tail-latency experiment, as a test of direction with generous bounds. A server on Netty
 * loopback answers 5 % of arrivals after 500 ms and the rest after 5 ms (fixed seed). Without
 * hedging the 99th percentile is the slow answer; with a hedge after 50 ms it is not, and the extra
 * load is about the share of slow first attempts. Both engines run every configuration and the
 * figures (p50, p99, p99.9, arrivals per call) are printed side by side. At most 10 calls are in
 * flight, so that one stall of the (shared) test machine delays at most 0.5 % of the calls; a row
 * outside its bounds is measured once more before the assertion.
 */
class HedgingTailLatencyTest {

    private static final int CALLS = 1500;
    private static final int WARM_UP = 100;
    private static final int IN_FLIGHT = 10;
    private static final long SLOW_MS = 500;
    private static final long FAST_MS = 5;

    /** One measured configuration under one engine. */
    record Figures(String engine, String config, double p50, double p99, double p999, double load) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%-12s %-22s %8.1f %8.1f %8.1f %8.3f", engine, config, p50, p99, p999,
                    load);
        }
    }

    @Test
    void hedgingCutsTheTailForLittleExtraLoad() throws Exception {
        Map<String, ServiceConfig> configs = new LinkedHashMap<>();
        configs.put("no hedging", new ServiceConfig(List.of(), null));
        configs.put("hedging 2 x 50ms", Configs.hedged(Configs.hedging(2, 50, Status.Code.UNAVAILABLE)));
        configs.put("hedging 3 x 50ms", Configs.hedged(Configs.hedging(3, 50, Status.Code.UNAVAILABLE)));
        List<Figures> all = new ArrayList<>();
        try (ScriptedServer server = ScriptedServer.startNetty();
                RetryScheduler scheduler = RetryScheduler.create(2, "tail-latency")) {
            for (Map.Entry<String, ServiceConfig> c : configs.entrySet()) {
                for (Engine engine : Engine.values()) {
                    Figures f = measure(server, scheduler, engine, c.getKey(), Configs.channel(c.getValue()));
                    if (!withinBounds(f)) {
                        // one stall of this shared machine delays every call in flight at once; measure again
                        System.out.println("re-measured after " + f);
                        f = measure(server, scheduler, engine, c.getKey(), Configs.channel(c.getValue()));
                    }
                    all.add(f);
                }
            }
            assertThat(scheduler.outstandingTimers()).isZero();
        }
        System.out.println(String.format(Locale.ROOT, "%-12s %-22s %8s %8s %8s %8s", "engine", "config", "p50 ms",
                "p99 ms", "p99.9 ms", "load"));
        all.forEach(System.out::println);
        for (Figures f : all) {
            if (f.config().equals("no hedging")) {
                assertThat(f.p99()).as(f + ": p99 without hedging is the slow answer").isGreaterThan(400);
                assertThat(f.load()).as(f + ": one arrival per call").isEqualTo(1.0);
            } else {
                assertThat(f.p99()).as(f + ": p99 with hedging").isLessThan(150);
                assertThat(f.load()).as(f + ": extra load").isLessThan(1.15);
                assertThat(f.p50()).as(f + ": p50 with hedging").isLessThan(40);
            }
        }
    }

    private static boolean withinBounds(Figures f) {
        return f.config().equals("no hedging") ? f.p99() > 400 && f.load() == 1.0
                : f.p99() < 150 && f.load() < 1.15 && f.p50() < 40;
    }

    private static Figures measure(ScriptedServer server, RetryScheduler scheduler, Engine engine, String name,
            ChannelRetryConfig config) throws Exception {
        Random random = new Random(5);
        server.script(a -> {
            boolean slow;
            synchronized (random) {
                slow = random.nextInt(100) < 5;
            }
            return Action.ok().delay(slow ? SLOW_MS : FAST_MS);
        });
        try (Engines.Client client = Engines.client(engine, server, Transport.NETTY, config, scheduler)) {
            run(client.channel(), WARM_UP);
            server.reset();
            long[] latencies = run(client.channel(), CALLS);
            Thread.sleep(50);
            double load = (double) server.arrivalCount() / CALLS;
            Arrays.sort(latencies);
            return new Figures(engine.name().toLowerCase(Locale.ROOT), name, millis(latencies, 0.50),
                    millis(latencies, 0.99), millis(latencies, 0.999), load);
        }
    }

    /** {@code calls} unary calls, at most {@link #IN_FLIGHT} at a time; the latency of each in ns. */
    private static long[] run(Channel channel, int calls) throws InterruptedException {
        Semaphore slots = new Semaphore(IN_FLIGHT);
        CountDownLatch done = new CountDownLatch(calls);
        long[] latencies = new long[calls];
        ConcurrentLinkedQueue<Status> failures = new ConcurrentLinkedQueue<>();
        for (int i = 0; i < calls; i++) {
            slots.acquire();
            int index = i;
            long start = System.nanoTime();
            ClientCall<io.grpc.testing.protobuf.SimpleRequest, SimpleResponse> call =
                    channel.newCall(Rpc.UNARY, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS));
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
        return latencies;
    }

    private static double millis(long[] sorted, double quantile) {
        int i = (int) Math.ceil(quantile * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))] / 1e6;
    }
}
