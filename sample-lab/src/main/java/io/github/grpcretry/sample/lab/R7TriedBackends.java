package io.github.grpcretry.sample.lab;

import io.github.grpcretry.sample.proto.FlakyGrpc;
import io.github.grpcretry.sample.proto.FlakyRequest;
import io.github.grpcretry.sample.server.ArrivalLog;
import io.github.grpcretry.sample.server.BackendGroup;
import io.github.grpcretry.sample.server.FlakyServer;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * R7: three Netty backends on 127.0.0.1 behind one channel (a name resolver answering with their three
 * addresses, the line's default {@code round_robin}), 8 concurrent callers; first one backend answers UNAVAILABLE to
 * everything (retry, max-attempts 3, 1 ms backoff), then one answers {@link #SLOW_MS} late (hedging, max-attempts 3,
 * delay {@link #HEDGING_DELAY}). Each scenario runs with {@code avoid-tried-backends: false} and with the default
 * ({@code true}); what the backends' arrival logs show (retries or hedges that reached a backend an earlier attempt
 * of the same call had reached) and what the callers saw (failed calls, p99 latency). Runs on either Spring Boot
 * line ({@link LabClients}).
 */
public final class R7TriedBackends {

    public static final int CALLERS = 8;
    /** Calls per row in the lab (at least 2,000). */
    public static final int CALLS = 2400;
    static final long SLOW_MS = 200;
    static final String HEDGING_DELAY = "30ms";
    private static final long DEADLINE_MS = 10_000;

    private R7TriedBackends() {
    }

    /** One scenario: which backend misbehaves and the channel's policy. */
    enum Scenario {
        FAILING("one backend always UNAVAILABLE, retry 3 attempts", "retries"),
        SLOW("one backend " + SLOW_MS + " ms slow, hedging 3 attempts every " + HEDGING_DELAY, "hedges");

        final String label;
        final String later;

        Scenario(String label, String later) {
            this.label = label;
            this.later = later;
        }

        BackendGroup start(long seed) {
            List<FlakyServer> servers = new ArrayList<>();
            servers.add(this == FAILING ? FlakyServer.start(seed, () -> Status.UNAVAILABLE.withDescription("R7: the failing backend"))
                    : FlakyServer.startSlow(seed, SLOW_MS));
            servers.add(FlakyServer.start(seed + 1));
            servers.add(FlakyServer.start(seed + 2));
            return BackendGroup.of(servers);
        }

        ChannelSpec channel(String name, String target, boolean avoid) {
            ChannelSpec c = ChannelSpec.channel(name, target);
            if (this == FAILING) {
                c.retry(3, "1ms", "1ms", 1);
            } else {
                c.hedging(3, HEDGING_DELAY);
            }
            return c.property("avoid-tried-backends", Boolean.toString(avoid));
        }
    }

    /** What one row measured; {@code reused}: the engine's {@code backend.reused} count by reason (null: not counted). */
    record Measured(int calls, int failed, int later, int toTried, double p99Ms, Map<String, Integer> reused) {

        String text(String later) {
            return String.format(Locale.ROOT, "%d calls: %d failed, %d of %d %s to a tried backend%s, p99 %.1f ms", calls, failed,
                    toTried, this.later, later, reused == null ? "" : reusedTotal() == 0 ? " (backend.reused 0)"
                            : " (backend.reused " + reused + ")", p99Ms);
        }

        int reusedTotal() {
            return reused == null ? 0 : reused.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    /** At most this share of the retries or hedges may go back, each counted by the engine (its picks ran out). */
    static final double MAX_REUSED_SHARE = 0.05;

    public static LabTable run(LabClients clients, long seed) {
        return run(clients, seed, CALLS);
    }

    /** R7 with {@code calls} calls per row (the test of the build runs it small). */
    public static LabTable run(LabClients clients, long seed, int calls) {
        LabTable t = LabTable.of("R7", String.format(Locale.ROOT, "avoiding tried backends: 3 Netty backends on 127.0.0.1, "
                + "round_robin, %d callers, %d calls per row", CALLERS, calls), "rule", clients);
        boolean available = "interceptor".equals(clients.engine());
        for (Scenario s : Scenario.values()) {
            try (BackendGroup group = s.start(seed)) {
                List<ChannelSpec> channels = List.of(s.channel("r7-off", group.target(), false),
                        s.channel("r7-on", group.target(), true));
                try (LabClients.Client client = clients.client(available ? channels : channels.subList(0, 1), Map.of())) {
                    Measured off = measure(client.channel("r7-off"), group, "r7-" + s.name() + "-off", calls, null);
                    t.add(LabRow.info(s.label + ", avoidance off", "–", off.text(s.later),
                            "what grpc-java's retries do: each attempt is picked independently"));
                    if (!available) {
                        t.add(LabRow.notAvailable(s.label + ", avoidance on", "0 to a tried backend",
                                "avoid-tried-backends needs the interceptor engine (grpc-java's native retries cannot do it)"));
                        continue;
                    }
                    Measured on = measure(client.channel("r7-on"), group, "r7-" + s.name() + "-on", calls, client);
                    boolean pass = on.later() > 0 && on.toTried() == on.reusedTotal()
                            && on.toTried() <= MAX_REUSED_SHARE * on.later() && (s != Scenario.FAILING || on.failed() == 0);
                    t.add(LabRow.rule(s.label + ", avoidance on", "0 to a tried backend"
                                    + (s == Scenario.FAILING ? ", 0 failed" : ""), on.text(s.later), pass,
                            "two healthy backends are ready: the " + s.later + " go to backends the call has not tried; "
                                    + "one goes back only when the balancer's backend-picks (5) all return tried ones, "
                                    + "each counted by grpc.client.retry.backend.reused, at most "
                                    + Math.round(MAX_REUSED_SHARE * 100) + " % of them"
                                    + (s == Scenario.FAILING ? "; no call fails" : "")));
                }
            }
        }
        return t;
    }

    /** Warms the channel up (every backend reached), then {@link #CALLERS} threads make {@code calls} calls in all. */
    static Measured measure(Channel channel, BackendGroup group, String prefix, int calls, LabClients.Client counted) {
        Map<String, Integer> before = reused(counted);
        warmUp(channel, group, prefix);
        ExecutorService pool = Executors.newFixedThreadPool(CALLERS);
        long[] latencies = new long[calls];
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger next = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<?>> all = new ArrayList<>();
            for (int c = 0; c < CALLERS; c++) {
                all.add(pool.submit(() -> {
                    go.await();
                    for (int i = next.getAndIncrement(); i < calls; i = next.getAndIncrement()) {
                        long start = System.nanoTime();
                        try {
                            FlakyGrpc.newBlockingStub(channel).withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS)
                                    .call(FlakyRequest.newBuilder().setKey(prefix + "-" + i).build());
                        } catch (StatusRuntimeException e) {
                            failed.incrementAndGet();
                        }
                        latencies[i] = System.nanoTime() - start; // published to the reader by the futures
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : all) {
                f.get(10, TimeUnit.MINUTES);
            }
        } catch (Exception e) {
            throw new IllegalStateException("R7: the callers did not finish", e);
        } finally {
            pool.shutdownNow();
        }
        int later = 0;
        int toTried = 0;
        for (int i = 0; i < calls; i++) {
            List<Integer> backends = backendsInOrder(group, prefix + "-" + i);
            later += Math.max(0, backends.size() - 1);
            toTried += backends.size() - new HashSet<>(backends).size();
        }
        group.servers().forEach(s -> s.arrivals().forgetKeys());
        Arrays.sort(latencies);
        double p99 = latencies[Math.max(0, (int) Math.ceil(calls * 0.99) - 1)] / 1e6;
        Map<String, Integer> reused = new java.util.TreeMap<>();
        reused(counted).forEach((reason, n) -> {
            int d = n - before.getOrDefault(reason, 0);
            if (d > 0) {
                reused.put(reason, d);
            }
        });
        return new Measured(calls, failed.get(), later, toTried, p99, counted == null ? null : Map.copyOf(reused));
    }

    /** The engine's {@code grpc.client.retry.backend.reused} counts of channel r7-on by reason (empty: not counted). */
    private static Map<String, Integer> reused(LabClients.Client client) {
        Map<String, Integer> out = new java.util.TreeMap<>();
        io.micrometer.core.instrument.MeterRegistry meters = client == null ? null : client.meters();
        if (meters != null) {
            for (io.micrometer.core.instrument.Counter c : meters.find(io.github.grpcretry.metrics.RetryMeterNames.BACKEND_REUSED)
                    .tag(io.github.grpcretry.metrics.RetryMeterNames.TAG_CLIENT, "r7-on").counters()) {
                out.merge(c.getId().getTag(io.github.grpcretry.metrics.RetryMeterNames.TAG_REASON), (int) c.count(), Integer::sum);
            }
        }
        return out;
    }

    /** The backends (indexes in the group) each attempt of call {@code key} reached, in the order they arrived. */
    static List<Integer> backendsInOrder(BackendGroup group, String key) {
        record At(long nanoTime, int backend) {
        }
        List<At> arrivals = new ArrayList<>();
        for (int b = 0; b < group.servers().size(); b++) {
            for (ArrivalLog.Arrival a : group.servers().get(b).arrivals().arrivals(key)) {
                arrivals.add(new At(a.nanoTime(), b));
            }
        }
        arrivals.sort(Comparator.comparingLong(At::nanoTime));
        return arrivals.stream().map(At::backend).toList();
    }

    /** Calls until every backend of the group has taken one (round_robin has connected to all of them). */
    private static void warmUp(Channel channel, BackendGroup group, String prefix) {
        Set<Integer> reached = new HashSet<>();
        for (int i = 0; i < 300 && reached.size() < group.servers().size(); i++) {
            String key = prefix + "-warm-up-" + i;
            try {
                FlakyGrpc.newBlockingStub(channel).withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS)
                        .call(FlakyRequest.newBuilder().setKey(key).build());
            } catch (StatusRuntimeException e) {
                // the failing backend's answer: it was reached
            }
            reached.addAll(backendsInOrder(group, key));
        }
        if (reached.size() < group.servers().size()) {
            throw new IllegalStateException("R7: not every backend was reached in 300 warm-up calls");
        }
    }
}
