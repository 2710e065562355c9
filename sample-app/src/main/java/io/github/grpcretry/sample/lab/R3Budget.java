package io.github.grpcretry.sample.lab;

import static io.github.grpcretry.sample.lab.FlakyCalls.pct;
import static io.github.grpcretry.sample.lab.FlakyCalls.ratio;

import io.github.grpcretry.sample.proto.FlakyGrpc;
import io.github.grpcretry.sample.proto.FlakyReply;
import io.github.grpcretry.sample.proto.FlakyRequest;
import io.github.grpcretry.sample.proto.Script;
import io.github.grpcretry.sample.server.FlakyServer;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Phaser;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * R3 (seed 002): the retry budget. The seed's budget is a shared bucket (each request deposits ratio,
 * cap 10, starts empty, a retry takes 1); ours is windowed (docs/design.md §6) and runs here with
 * {@code min-retries-per-second: 0}, so it starts empty too.
 */
final class R3Budget {

    static final int REQUESTS = 1500;
    static final int RUNS = 4;
    /** Rows run side by side: each waits on its backoffs most of the time. */
    static final int THREADS = 6;
    static final int CHAIN_REQUESTS = 200;
    private static final double[] P = {0.05, 0.20, 0.50, 1.00};
    private static final String[] STRATEGY = {"no retry", "budget 10 %", "budget 20 %", "budget 50 %", "unlimited (3 attempts)"};
    private static final double[] RATIO = {0, 0.1, 0.2, 0.5, 0};
    /** The seed's figures: success rate, amplification. */
    private static final double[][][] SEED = {
            {{0.955, 1.000}, {1.0, 1.047}, {1.0, 1.047}, {1.0, 1.047}, {1.0, 1.047}},
            {{0.799, 1.000}, {0.883, 1.100}, {0.960, 1.197}, {0.997, 1.242}, {0.993, 1.237}},
            {{0.511, 1.000}, {0.565, 1.100}, {0.611, 1.199}, {0.761, 1.500}, {0.879, 1.730}},
            {{0.0, 1.000}, {0.0, 1.099}, {0.0, 1.199}, {0.0, 1.500}, {0.0, 3.000}}};

    private R3Budget() {
    }

    static ChannelSpec strategy(String name, String address, int s) {
        ChannelSpec c = ChannelSpec.channel(name, address);
        if (s == 0) {
            return c;
        }
        c.retry(3, "1ms", "2ms", 2);
        if (RATIO[s] > 0) {
            c.budget(RATIO[s], 0.0);
        }
        return c;
    }

    // ---------------------------------------------------------------- budget × failure rate

    private record Cell(double success, double amplification, long received) {
    }

    private static String cellName(int pi, int s, int run) {
        return "r3-p" + pi + "-s" + s + "-" + run;
    }

    static LabTable table(String engine, long seed, boolean budgets, String why) {
        LabTable t = new LabTable("R3a", "retry budget × failure rate: success / amplification, mean of " + RUNS + " runs × "
                + REQUESTS + " requests per cell, the strategies of one run on the same fault stream (in-process; seed 002: one run)", "seed: Python, shared bucket");
        Map<String, FlakyServer> servers = new LinkedHashMap<>();
        List<ChannelSpec> channels = new ArrayList<>();
        for (int pi = 0; pi < P.length; pi++) {
            for (int s = 0; s < STRATEGY.length; s++) {
                if (!budgets && RATIO[s] > 0) {
                    continue;
                }
                for (int run = 0; run < RUNS; run++) {
                    String name = cellName(pi, s, run);
                    // common random numbers: every strategy of one failure rate and run sees the same fault stream
                    FlakyServer server = FlakyServer.startInProcess(seed * 1000 + pi * 100 + run);
                    servers.put(name, server);
                    // R3a's budgets get the longest window (60 s): a cell of 1500 requests fits in it even on a
                    // loaded machine, where it can take longer than the default 10 s; a window that slides during
                    // the cell lets calls leave it before the retries they paid for, and the cell could end
                    // above 1 + ratio (seen once under a load average of 20)
                    channels.add(RATIO[s] > 0 ? strategy(name, server.address(), s).budgetTtl("60s")
                            : strategy(name, server.address(), s));
                }
            }
        }
        // the floor: budget 10 % with the default min-retries-per-second, service down
        FlakyServer floorServer = FlakyServer.startInProcess(seed);
        if (budgets) {
            channels.add(ChannelSpec.channel("r3-floor", floorServer.address()).retry(3, "1ms", "2ms", 2).budget(0.1, null));
        }
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try (LabContexts.Client client = LabContexts.client(engine, channels, Map.of())) {
            Map<String, Future<Cell>> cells = new LinkedHashMap<>();
            for (Map.Entry<String, FlakyServer> e : servers.entrySet()) {
                Channel ch = client.channel(e.getKey());
                double p = P[e.getKey().charAt(4) - '0'];
                cells.put(e.getKey(), pool.submit(() -> runCell(ch, e.getValue(), p, REQUESTS)));
            }
            for (int pi = 0; pi < P.length; pi++) {
                for (int s = 0; s < STRATEGY.length; s++) {
                    String rowName = String.format(Locale.ROOT, "p = %d %%, %s", (int) (P[pi] * 100), STRATEGY[s]);
                    String seedText = pct(SEED[pi][s][0]) + " / " + ratio(SEED[pi][s][1]);
                    if (!cells.containsKey(cellName(pi, s, 0))) {
                        t.add(LabRow.notAvailable(rowName, seedText, why));
                        continue;
                    }
                    double success = 0;
                    double amplification = 0;
                    double maxAmplification = 0;
                    for (int run = 0; run < RUNS; run++) {
                        Cell c = get(cells.get(cellName(pi, s, run)));
                        success += c.success() / RUNS;
                        amplification += c.amplification() / RUNS;
                        maxAmplification = Math.max(maxAmplification, c.amplification());
                    }
                    String measured = pct(success) + " / " + ratio(amplification);
                    double bound = RATIO[s] > 0 ? 1 + RATIO[s] : s == 0 ? 1.0 : 3.0;
                    boolean withinBound = maxAmplification <= bound + 1e-9;
                    if (P[pi] == 1.0 && (s == 0 || s == 4)) {
                        boolean pass = success == SEED[pi][s][0] && Math.abs(amplification - SEED[pi][s][1]) < 1e-9;
                        t.add(LabRow.exact(rowName, seedText, measured, pass, "exactly " + seedText));
                    } else {
                        boolean pass = withinBound && Math.abs(success - SEED[pi][s][0]) <= 0.02 + 1e-9
                                && Math.abs(amplification - SEED[pi][s][1]) <= 0.03 + 1e-9
                                && (s != 0 || amplification == 1.0);
                        t.add(LabRow.tolerance(rowName, seedText, measured, pass, "±2 points / ±0.03"
                                + (s == 0 ? ", amplification exactly 1.000" : "")
                                + (RATIO[s] > 0 ? ", and every run ≤ " + ratio(bound) : "")));
                    }
                }
            }
            if (budgets) {
                Cell c = runCell(client.channel("r3-floor"), floorServer, 1.0, REQUESTS);
                double bound = 1 + 0.1 + 10.0 * 10 / REQUESTS;
                t.add(LabRow.rule("p = 100 %, budget 10 % with the default floor (10 retries/s over ttl 10s)",
                        "(seed's bucket has no floor)", pct(c.success()) + " / " + ratio(c.amplification()),
                        c.amplification() <= bound + 1e-9 && c.amplification() > 1.1,
                        "≤ 1 + ratio + floor × ttl ÷ requests = " + ratio(bound)));
            } else {
                t.add(LabRow.notAvailable("p = 100 %, budget 10 % with the default floor", "(seed's bucket has no floor)", why));
            }
        } finally {
            pool.shutdownNow();
            servers.values().forEach(FlakyServer::close);
            floorServer.close();
        }
        return t;
    }

    private static Cell runCell(Channel ch, FlakyServer server, double p, int requests) {
        long before = server.arrivals().total();
        int ok = 0;
        Script script = FlakyCalls.failWith(p);
        for (int i = 0; i < requests; i++) {
            if (FlakyCalls.call(ch, null, script).ok()) {
                ok++;
            }
        }
        long received = server.arrivals().total() - before;
        return new Cell(ok / (double) requests, received / (double) requests, received);
    }

    private static <T> T get(Future<T> f) {
        try {
            return f.get(120, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("a lab row failed to run", e);
        }
    }

    // ---------------------------------------------------------------- capacity-limited service

    static final int SECONDS = 8;
    static final int RATE = 120;
    /** Capacity per second: 120, halved in seconds 2 and 3 (the overload). */
    static int capacity(int second) {
        return second == 2 || second == 3 ? RATE / 2 : RATE;
    }

    /**
     * Per-second server arrivals and client results of one strategy, and the arrivals counted per call
     * (every call's own key in the server's log, whenever its attempts arrived: a paced call that runs
     * late still counts for its call, not for the second it slipped into).
     */
    private record Timeline(int[] received, int[] calls, int[] ok, int arrivals, int callsWithOneArrival) {
    }

    private static String capKey(int n) {
        return "cap-" + n;
    }

    static LabTable capacity(String engine, long seed, boolean budgets, String why) {
        LabTable t = new LabTable("R3b", "capacity-limited service: " + RATE + " calls/s offered for " + SECONDS
                + " s, capacity " + RATE + "/s, halved in seconds 2–3; received calls per second (seed 002)",
                "seed: Python");
        String[] names = {"no retry", "unlimited (3 attempts)", "budget 10 %"};
        String[] seedRows = {"120 120 120 120 120 120 120 120", "120 120 254 190 123 120 122 120",
                "120 120 141 128 120 120 120 120"};
        int[] strategies = {0, 4, 1};
        AtomicLong start = new AtomicLong(Long.MAX_VALUE);
        List<FlakyServer> servers = new ArrayList<>();
        List<AtomicIntegerArray> receivedPerSecond = new ArrayList<>();
        List<ChannelSpec> channels = new ArrayList<>();
        for (int i = 0; i < strategies.length; i++) {
            AtomicIntegerArray received = new AtomicIntegerArray(SECONDS + 2);
            AtomicIntegerArray admitted = new AtomicIntegerArray(SECONDS + 2);
            receivedPerSecond.add(received);
            FlakyServer server = FlakyServer.start(seed, () -> {
                int sec = second(start.get());
                if (sec < 0 || sec > SECONDS) {
                    return null;
                }
                received.incrementAndGet(sec);
                if (admitted.incrementAndGet(sec) > capacity(sec)) {
                    return Status.UNAVAILABLE.withDescription("over capacity");
                }
                return null;
            });
            servers.add(server);
            if (strategies[i] == 1 && !budgets) {
                continue;
            }
            channels.add(strategy("r3-cap-" + i, server.address(), strategies[i]));
        }
        try (LabContexts.Client client = LabContexts.client(engine, channels, Map.of())) {
            List<Timeline> timelines = new ArrayList<>();
            List<Channel> chans = new ArrayList<>();
            for (int i = 0; i < strategies.length; i++) {
                boolean available = !(strategies[i] == 1 && !budgets);
                chans.add(available ? client.channel("r3-cap-" + i) : null);
                if (available) {
                    FlakyCalls.call(chans.get(i), null, Script.getDefaultInstance()); // connect (before t0: not counted)
                }
            }
            long t0 = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
            start.set(t0);
            ScheduledExecutorService timer = Executors.newScheduledThreadPool(1);
            int[][] calls = new int[strategies.length][SECONDS];
            AtomicIntegerArray[] oks = new AtomicIntegerArray[strategies.length];
            Phaser pending = new Phaser(1); // the lab's own party, plus one per call in flight
            long periodNanos = TimeUnit.SECONDS.toNanos(1) / RATE;
            for (int i = 0; i < strategies.length; i++) {
                oks[i] = new AtomicIntegerArray(SECONDS);
            }
            for (int n = 0; n < SECONDS * RATE; n++) {
                long at = t0 + n * periodNanos;
                int sec = n / RATE;
                for (int i = 0; i < strategies.length; i++) {
                    Channel ch = chans.get(i);
                    if (ch == null) {
                        continue;
                    }
                    calls[i][sec]++;
                    AtomicIntegerArray ok = oks[i];
                    pending.register();
                    String key = capKey(n);
                    timer.schedule(() -> FlakyGrpc.newStub(ch).withDeadlineAfter(5, TimeUnit.SECONDS).call(
                            FlakyRequest.newBuilder().setKey(key).build(), new StreamObserver<>() {
                                @Override
                                public void onNext(FlakyReply value) {
                                    ok.incrementAndGet(sec);
                                }

                                @Override
                                public void onError(Throwable e) {
                                    pending.arriveAndDeregister();
                                }

                                @Override
                                public void onCompleted() {
                                    pending.arriveAndDeregister();
                                }
                            }), at - System.nanoTime(), TimeUnit.NANOSECONDS);
                }
            }
            long deadline = t0 + TimeUnit.SECONDS.toNanos(SECONDS + 6);
            try {
                pending.awaitAdvanceInterruptibly(pending.arrive(), deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                // calls still in flight after the run: counted as they stand
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            timer.shutdownNow();
            for (int i = 0; i < strategies.length; i++) {
                int[] r = new int[SECONDS];
                int[] ok = new int[SECONDS];
                for (int s = 0; s < SECONDS; s++) {
                    r[s] = receivedPerSecond.get(i).get(s);
                    ok[s] = oks[i].get(s);
                }
                int arrivals = 0;
                int single = 0;
                for (int n = 0; n < SECONDS * RATE; n++) {
                    int a = servers.get(i).arrivals().attempts(capKey(n));
                    arrivals += a;
                    single += a == 1 ? 1 : 0;
                }
                timelines.add(new Timeline(r, calls[i], ok, arrivals, single));
            }
            Timeline plain = timelines.get(0);
            for (int i = 0; i < strategies.length; i++) {
                if (chans.get(i) == null) {
                    t.add(LabRow.notAvailable(names[i] + ": received/s", seedRows[i], why));
                    continue;
                }
                Timeline tl = timelines.get(i);
                // the row counts calls (each call's arrivals by its key), not seconds: an arrival that
                // slipped past the last second is shown apart and still counts for its call
                int total = tl.arrivals();
                int outside = total - sum(tl.received());
                String measured = join(tl.received()) + (outside == 0 ? "" : " (+" + outside + " outside the " + SECONDS + " s)");
                boolean pass;
                String rule;
                int offered = sum(tl.calls());
                if (strategies[i] == 0) {
                    pass = total == offered && tl.callsWithOneArrival() == offered;
                    rule = "one arrival per call: " + total + " arrivals for " + offered + " calls"
                            + (tl.callsWithOneArrival() == offered ? "" : ", " + (offered - tl.callsWithOneArrival())
                            + " of them not exactly one");
                    t.add(LabRow.exact(names[i] + ": received/s", seedRows[i], measured, pass, rule));
                } else if (strategies[i] == 4) {
                    int peak = Math.max(tl.received()[2], tl.received()[3]);
                    pass = peak >= 1.5 * RATE && total <= 3 * offered;
                    rule = "peaks in seconds 2–3 above 1.5 × " + RATE;
                    t.add(LabRow.range(names[i] + ": received/s", seedRows[i], measured, pass, rule));
                } else {
                    int extra = total - offered;
                    int unlimitedExtra = timelines.get(1).arrivals() - sum(timelines.get(1).calls());
                    pass = extra <= Math.floor(0.1 * offered) && extra > 0 && extra < unlimitedExtra;
                    rule = "extra arrivals " + extra + " ≤ 10 % of " + offered + " calls, and fewer than unlimited's " + unlimitedExtra;
                    t.add(LabRow.rule(names[i] + ": received/s", seedRows[i], measured, pass, rule));
                }
                String success = join(successPercent(tl));
                double rate = 100.0 * sum(tl.ok()) / Math.max(1, sum(tl.calls()));
                double plainRate = 100.0 * sum(plain.ok()) / Math.max(1, sum(plain.calls()));
                t.add(LabRow.range(names[i] + ": client success %/s", i == 0 ? "100 100 48 70 100 100 99 100"
                                : i == 1 ? "100 100 48 71 100 100 99 100" : "100 100 48 71 100 100 100 100",
                        success + String.format(Locale.ROOT, " (run: %.1f %%)", rate), Math.abs(rate - plainRate) <= 5,
                        "over the run, the same as with no retry ±5 points"));
            }
        } finally {
            servers.forEach(FlakyServer::close);
        }
        return t;
    }

    private static int[] successPercent(Timeline tl) {
        int[] r = new int[SECONDS];
        for (int s = 0; s < SECONDS; s++) {
            r[s] = tl.calls()[s] == 0 ? 0 : (int) Math.round(100.0 * tl.ok()[s] / tl.calls()[s]);
        }
        return r;
    }

    private static int second(long t0) {
        if (t0 == Long.MAX_VALUE) {
            return -1;
        }
        long d = System.nanoTime() - t0;
        return d < 0 ? -1 : (int) (d / 1_000_000_000L);
    }

    // ---------------------------------------------------------------- three layers

    static LabTable chain(String engine, long seed, boolean budgets, String why) {
        LabTable t = new LabTable("R3c", "three layers client→A→B→C, every layer retrying (3 attempts), C down: "
                + "attempts reaching C per original request, " + CHAIN_REQUESTS + " requests (seed 002)", "seed: Python");
        try (FlakyServer c = FlakyServer.start(seed)) {
            Map<String, Double> plain = runChain(engine, c, false, budgets);
            t.add(LabRow.exact("every layer unlimited", "27.00 (5400 calls)", fmtChain(plain.get("unlimited"), c),
                    Math.abs(plain.get("unlimited") - 27.0) < 1e-9, "exactly 3 × 3 × 3 = 27.00"));
            if (budgets) {
                double v = plain.get("budget");
                t.add(LabRow.tolerance("budget 10 % at every layer", "1.31 (263 calls)", fmtChain(v, c),
                        v <= 1.331 + 1e-9 && Math.abs(v - 1.31) <= 0.03 + 1e-9, "±0.03, and ≤ 1.1³ = 1.331"));
            } else {
                t.add(LabRow.notAvailable("budget 10 % at every layer", "1.31 (263 calls)", why));
            }
            Map<String, Double> guarded = guardInBuild() ? runChain(engine, c, true, budgets) : null;
            if (guarded == null) {
                String none = "the server-side amplification guard is not in this build";
                t.add(LabRow.notAvailable("guard, every layer unlimited", "(not in the seed) at most 3", none));
                t.add(LabRow.notAvailable("guard plus budget 10 % at every layer", "(not in the seed) about 1.1", none));
            } else {
                double g = guarded.get("unlimited");
                t.add(LabRow.rule("guard, every layer unlimited", "(not in the seed) at most 3", fmtChain(g, c), g <= 3.0 + 1e-9,
                        "≤ 3.00: only the layer above C retries"));
                if (budgets) {
                    double gb = guarded.get("budget");
                    t.add(LabRow.tolerance("guard plus budget 10 % at every layer", "(not in the seed) about 1.1", fmtChain(gb, c),
                            gb >= 1.0 && gb <= 1.13 + 1e-9, "1.00–1.13"));
                } else {
                    t.add(LabRow.notAvailable("guard plus budget 10 % at every layer", "(not in the seed) about 1.1", why));
                }
            }
        }
        return t;
    }

    /** Whether the starter's guard package (docs/design.md §8) is on the class path at all. */
    static boolean guardInBuild() {
        return R3Budget.class.getClassLoader().getResource("io/github/grpcretry/guard") != null;
    }

    private static String fmtChain(double perRequest, FlakyServer c) {
        return String.format(Locale.ROOT, "%.2f (%d calls)", perRequest, Math.round(perRequest * CHAIN_REQUESTS));
    }

    /** Attempts reaching C per original request, by variant; null when guard is asked for but absent. */
    private static Map<String, Double> runChain(String engine, FlakyServer c, boolean guard, boolean budgets) {
        List<String> variants = budgets ? List.of("unlimited", "budget") : List.of("unlimited");
        Map<String, Object> extra = Map.of("grpc.retry.guard.enabled", Boolean.toString(guard));
        try (Relay b = Relay.start(engine, nextHop(variants, c.address()), extra);
             Relay a = Relay.start(engine, nextHop(variants, b.address()), extra)) {
            if (guard && !(a.hasGuard() && b.hasGuard())) {
                return null;
            }
            if (!guard && (a.hasGuard() || b.hasGuard())) {
                throw new IllegalStateException("grpc.retry.guard.enabled=false left the guard on");
            }
            List<ChannelSpec> top = new ArrayList<>();
            for (String v : variants) {
                top.add(hop("to-a-" + v, a.address(), v));
            }
            Map<String, Double> result = new LinkedHashMap<>();
            try (LabContexts.Client client = LabContexts.client(engine, top, Map.of())) {
                for (String v : variants) {
                    Channel ch = client.channel("to-a-" + v);
                    long before = c.arrivals().total();
                    Script down = FlakyCalls.failWith(1.0);
                    // four callers at a time: each request spends most of its time in backoffs
                    ExecutorService callers = Executors.newFixedThreadPool(4);
                    List<Future<?>> done = new ArrayList<>();
                    for (int i = 0; i < CHAIN_REQUESTS; i++) {
                        String key = v + ":" + i;
                        done.add(callers.submit(() -> {
                            try {
                                FlakyGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS)
                                        .call(FlakyRequest.newBuilder().setKey(key).setScript(down).build());
                            } catch (StatusRuntimeException expected) {
                                // C is down: every request fails
                            }
                        }));
                    }
                    done.forEach(R3Budget::get);
                    callers.shutdown();
                    result.put(v, (c.arrivals().total() - before) / (double) CHAIN_REQUESTS);
                }
            }
            return result;
        }
    }

    private static List<ChannelSpec> nextHop(List<String> variants, String address) {
        return variants.stream().map(v -> hop("next-" + v, address, v)).collect(Collectors.toList());
    }

    private static ChannelSpec hop(String name, String address, String variant) {
        ChannelSpec spec = ChannelSpec.channel(name, address).retry(3, "1ms", "2ms", 2);
        if (variant.equals("budget")) {
            spec.budget(0.1, 0.0);
        }
        return spec;
    }

    private static String join(int[] values) {
        StringBuilder b = new StringBuilder();
        for (int v : values) {
            b.append(b.length() == 0 ? "" : " ").append(v);
        }
        return b.toString();
    }

    private static int sum(int[] values) {
        int s = 0;
        for (int v : values) {
            s += v;
        }
        return s;
    }
}
