package io.github.grpcretry.sample.lab;

import io.github.grpcretry.sample.proto.FlakyGrpc;
import io.github.grpcretry.sample.proto.FlakyReply;
import io.github.grpcretry.sample.proto.FlakyRequest;
import io.github.grpcretry.sample.server.FlakyServer;
import io.github.grpcretry.sample.server.QueueingBackend;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;

/**
 * R6: the retry storm, replayed (docs/metastable.md). A server with a capacity (4 workers × 40 ms,
 * μ = 100 calls/s) and a FIFO queue takes open-loop load at λ = 0.6 μ; a 2 s stall (capacity 0) builds a
 * queue. Each strategy runs on its own server and channel against the same seeded arrivals, once with
 * the stall and once without (the control). What the run measures per strategy: the time from the end
 * of the stall until goodput is at least 95 % of the offered calls for 3 consecutive seconds, the total
 * amplification (attempts reaching the server ÷ calls) and the wasted work (services that ended after
 * the caller had given up). The numbers come from the queueing estimate in docs/metastable.md, which
 * {@link #estimate} computes from the same constants.
 */
final class R6Metastable {

    static final int WORKERS = 4;
    static final Duration SERVICE_TIME = Duration.ofMillis(40);
    /** μ: calls per second the workers serve. */
    static final double CAPACITY = WORKERS * 1000.0 / SERVICE_TIME.toMillis();
    /** λ = 0.6 μ, Poisson arrivals from a seeded generator (the same arrival times for every strategy). */
    static final double RATE = 0.6 * CAPACITY;
    static final Duration DEADLINE = Duration.ofSeconds(2);
    static final Duration ATTEMPT_TIMEOUT = Duration.ofMillis(500);
    static final Duration STALL = Duration.ofSeconds(2);
    static final int MAX_ATTEMPTS = 3;
    static final String INITIAL_BACKOFF = "50ms";
    static final String MAX_BACKOFF = "200ms";
    static final double MULTIPLIER = 2;
    static final double BUDGET_RATIO = 0.1;
    static final String BUDGET_TTL = "2s";
    static final int THROTTLE_MAX_TOKENS = 10;
    static final double THROTTLE_RATIO = 0.1;
    /** Load before the start, not counted: connects the channels and lets the JIT compile the call path. */
    static final int WARM_UP_SECONDS = 3;
    /** Large enough never to be reached in a run (plain retry's queue grows by about 80 calls/s). */
    static final int QUEUE_LIMIT = 50_000;
    /** Goodput must be at least this share of the offered calls ... */
    static final double RECOVERED_SHARE = 0.95;
    /** ... in this many consecutive one-second windows. */
    static final int RECOVERED_WINDOWS = 3;
    /** Recovery time is searched in steps of this many ms after the stall's end. */
    static final int STEP_MS = 100;

    /** How long the load runs and where the stall starts (whole seconds from the start). */
    record Plan(int seconds, int stallAt) {

        /** The lab's run: 30 s, the stall at 8–10 s. */
        static final Plan FULL = new Plan(30, 8);
        /** The test's run: 12 s, the stall at 2–4 s (8 s after it: the model's recoveries leave ≥ 2 s to spare). */
        static final Plan SHORT = new Plan(12, 2);

        int stallEnd() {
            return stallAt + (int) STALL.toSeconds();
        }

        /** The latest recovery time that still fits 3 windows into the run. */
        double latestRecovery() {
            return seconds - stallEnd() - RECOVERED_WINDOWS;
        }
    }

    /** The strategies, each a channel configured through grpc.retry.* only. */
    enum Strategy {
        NONE("no retry"),
        RETRY("A6 retry"),
        THROTTLED("retry + throttling"),
        BUDGET("retry + budget"),
        BUDGET_DROP("retry + budget, server drops expired");

        final String label;

        Strategy(String label) {
            this.label = label;
        }

        ChannelSpec channel(String name, String address) {
            ChannelSpec c = ChannelSpec.channel(name, address);
            if (this == NONE) {
                return c;
            }
            c.retry(MAX_ATTEMPTS, INITIAL_BACKOFF, MAX_BACKOFF, MULTIPLIER)
                    .property("service-config.method[0].retry.per-attempt-receive-timeout", ATTEMPT_TIMEOUT.toMillis() + "ms");
            if (this == THROTTLED) {
                c.throttling(Integer.toString(THROTTLE_MAX_TOKENS), Double.toString(THROTTLE_RATIO));
            }
            if (this == BUDGET || this == BUDGET_DROP) {
                c.budget(BUDGET_RATIO, 0.0).property("budget.ttl", BUDGET_TTL);
            }
            return c;
        }

        boolean drops() {
            return this == BUDGET_DROP;
        }
    }

    /** The queueing estimate of docs/metastable.md for one strategy. */
    record Estimate(double backlog, double amplification, double recoverySeconds) {

        boolean recovers() {
            return !Double.isInfinite(recoverySeconds);
        }

        String text() {
            return recovers() ? String.format(Locale.ROOT, "recovers ≈ %.1f s (backlog ≈ %.0f, ×%.2f)", recoverySeconds,
                    backlog, amplification)
                    : String.format(Locale.ROOT, "never: λ × %.0f = %.0f/s > μ", amplification, RATE * amplification);
        }
    }

    /**
     * Recovery ≈ (backlog at the stall's end − μ × the wait a call tolerates) ÷ (μ − λ × attempts per
     * call while calls fail); never when λ × attempts per call ≥ μ. {@code stallArrivals}: the calls
     * offered during the stall (λ × 2 s on average; the seeded schedule's own count in a run).
     */
    static Estimate estimate(Strategy s, double stallArrivals) {
        double service = SERVICE_TIME.toMillis() / 1000.0;
        double attemptTimeout = ATTEMPT_TIMEOUT.toMillis() / 1000.0;
        return switch (s) {
            case NONE -> recovery(stallArrivals, 1, DEADLINE.toMillis() / 1000.0 - service);
            case RETRY -> new Estimate(Double.NaN, MAX_ATTEMPTS, Double.POSITIVE_INFINITY);
            // the bucket allows (max − threshold − 1) retries before it stops them, then none until calls succeed
            case THROTTLED -> recovery(stallArrivals + THROTTLE_MAX_TOKENS / 2.0 - 1, 1, attemptTimeout - service);
            // the budget spends what the last ttl of calls deposited, then ratio × λ
            case BUDGET -> recovery(stallArrivals + BUDGET_RATIO * RATE * ttlSeconds(), 1 + BUDGET_RATIO,
                    attemptTimeout - service);
            // expired calls cost nothing: only the last attempt timeout's arrivals are live work
            case BUDGET_DROP -> recovery(RATE * (1 + BUDGET_RATIO) * attemptTimeout, 1 + BUDGET_RATIO,
                    attemptTimeout - service);
        };
    }

    /** The estimate for the average stall (λ × 2 s arrivals in it). */
    static Estimate estimate(Strategy s) {
        return estimate(s, RATE * STALL.toMillis() / 1000.0);
    }

    private static double ttlSeconds() {
        return Duration.parse("PT" + BUDGET_TTL.toUpperCase(Locale.ROOT)).toMillis() / 1000.0;
    }

    private static Estimate recovery(double backlog, double amplification, double toleratedWait) {
        double inflow = RATE * amplification;
        if (inflow >= CAPACITY) {
            return new Estimate(backlog, amplification, Double.POSITIVE_INFINITY);
        }
        return new Estimate(backlog, amplification, Math.max(0, (backlog - CAPACITY * toleratedWait) / (CAPACITY - inflow)));
    }

    // ---------------------------------------------------------------- one run

    /** What the server saw, per second from the start (the tail holds late answers). */
    static final class Seconds implements QueueingBackend.Events {
        /** The start (System.nanoTime); nothing is counted before {@link #start} sets it. */
        private volatile long t0;
        private volatile boolean started;
        final AtomicIntegerArray arrivals;
        final AtomicIntegerArray served;
        final AtomicIntegerArray wasted;
        final AtomicIntegerArray dropped;
        final AtomicIntegerArray maxQueue;

        Seconds(int length) {
            arrivals = new AtomicIntegerArray(length);
            served = new AtomicIntegerArray(length);
            wasted = new AtomicIntegerArray(length);
            dropped = new AtomicIntegerArray(length);
            maxQueue = new AtomicIntegerArray(length);
        }

        void start(long t0) {
            this.t0 = t0;
            this.started = true;
        }

        private int second(long nanos) {
            if (!started) {
                return -1; // the warm-up
            }
            long d = nanos - t0;
            return d < 0 ? -1 : (int) Math.min(arrivals.length() - 1, d / 1_000_000_000L);
        }

        @Override
        public void arrived(long nanos, int queueLength) {
            int s = second(nanos);
            if (s >= 0) {
                arrivals.incrementAndGet(s);
                maxQueue.accumulateAndGet(s, queueLength, Math::max);
            }
        }

        @Override
        public void served(long endNanos, boolean gone) {
            int s = second(endNanos);
            if (s >= 0) {
                served.incrementAndGet(s);
                if (gone) {
                    wasted.incrementAndGet(s);
                }
            }
        }

        @Override
        public void dropped(long nanos) {
            int s = second(nanos);
            if (s >= 0) {
                dropped.incrementAndGet(s);
            }
        }
    }

    /**
     * One strategy's run: the arrival schedule's calls (offset from the start, in ns) and whether each
     * succeeded, and what the server saw per second.
     */
    record Run(Strategy strategy, boolean stalled, Plan plan, long[] offsets, boolean[] ok, int[] arrivals, int[] served,
            int[] wasted, int[] dropped, int[] maxQueue, long pacerLateNanos) {

        int calls() {
            return offsets.length;
        }

        long totalArrivals() {
            long n = 0;
            for (int a : arrivals) {
                n += a;
            }
            return n;
        }

        double amplification() {
            return totalArrivals() / (double) calls();
        }

        long totalWasted() {
            long n = 0;
            for (int w : wasted) {
                n += w;
            }
            return n;
        }

        long totalServed() {
            long n = 0;
            for (int s : served) {
                n += s;
            }
            return n;
        }

        long totalDropped() {
            long n = 0;
            for (int d : dropped) {
                n += d;
            }
            return n;
        }

        /** Calls offered in [from, to) seconds, and of them those that succeeded. */
        int[] window(double from, double to) {
            long a = (long) (from * 1e9);
            long b = (long) (to * 1e9);
            int offered = 0;
            int good = 0;
            for (int i = 0; i < offsets.length; i++) {
                if (offsets[i] >= a && offsets[i] < b) {
                    offered++;
                    if (ok[i]) {
                        good++;
                    }
                }
            }
            return new int[] {offered, good};
        }

        boolean goodWindow(double from) {
            int[] w = window(from, from + 1);
            return w[0] == 0 || w[1] >= RECOVERED_SHARE * w[0];
        }

        /**
         * Seconds from the stall's end until goodput is at least 95 % of the offered calls in 3
         * consecutive one-second windows (searched in 100 ms steps); null when that never happens within
         * the run.
         */
        Double recovery() {
            int end = plan.stallEnd();
            for (int step = 0; end + step * STEP_MS / 1000.0 + RECOVERED_WINDOWS <= plan.seconds() + 1e-9; step++) {
                double r = step * STEP_MS / 1000.0;
                boolean all = true;
                for (int k = 0; k < RECOVERED_WINDOWS && all; k++) {
                    all = goodWindow(end + r + k);
                }
                if (all) {
                    return r;
                }
            }
            return null;
        }

        /** The lowest goodput share of any one-second window (100 ms steps) in [from, to). */
        double worstWindow(double from, double to) {
            double worst = 1;
            for (double t = from; t + 1 <= to + 1e-9; t += STEP_MS / 1000.0) {
                int[] w = window(t, t + 1);
                if (w[0] > 0) {
                    worst = Math.min(worst, w[1] / (double) w[0]);
                }
            }
            return worst;
        }

        /** Goodput per second (% of the calls offered in that second that succeeded). */
        int[] goodputPercent() {
            int[] p = new int[plan.seconds()];
            for (int s = 0; s < p.length; s++) {
                int[] w = window(s, s + 1);
                p[s] = w[0] == 0 ? 100 : (int) Math.floor(100.0 * w[1] / w[0]);
            }
            return p;
        }

        int[] offeredPerSecond() {
            int[] p = new int[plan.seconds()];
            for (int s = 0; s < p.length; s++) {
                p[s] = window(s, s + 1)[0];
            }
            return p;
        }
    }

    // ---------------------------------------------------------------- the table

    static String title(Plan plan) {
        return String.format(Locale.ROOT, "the retry storm, replayed: λ = %.0f calls/s (0.6 μ, seeded Poisson) on %d workers × %d ms "
                        + "(μ = %.0f/s), FIFO queue, deadline %d s, per-attempt timeout %d ms; a %d s stall at %d–%d s of %d s, "
                        + "and a control run without it (in-process, every run at once)", RATE, WORKERS, SERVICE_TIME.toMillis(),
                CAPACITY, DEADLINE.toSeconds(), ATTEMPT_TIMEOUT.toMillis(), STALL.toSeconds(), plan.stallAt(), plan.stallEnd(),
                plan.seconds());
    }

    static LabTable table(String engine, long seed, Plan plan, boolean available, String why) {
        LabTable t = new LabTable("R6", title(plan), "model (docs/metastable.md)");
        if (!available) {
            for (Strategy s : Strategy.values()) {
                t.add(LabRow.notAvailable(s.label + ", stall", estimate(s).text(), why));
            }
            return t;
        }
        Result r = run(engine, seed, plan);
        rows(t, r);
        t.attach("r6-series.csv", series(r));
        return t;
    }

    /**
     * Every run per second: offered calls, attempts arriving at the server, goodput (calls offered in
     * that second that succeeded), wasted services, dropped calls, the longest queue.
     */
    static String series(Result r) {
        StringBuilder b = new StringBuilder("strategy,stall,second,offered,arrivals,goodput,wasted,dropped,max_queue\n");
        for (Run run : r.runs()) {
            int[] offered = run.offeredPerSecond();
            for (int s = 0; s < r.plan().seconds(); s++) {
                int good = run.window(s, s + 1)[1];
                b.append('"').append(run.strategy().label).append("\",").append(run.stalled()).append(',').append(s).append(',')
                        .append(offered[s]).append(',').append(run.arrivals()[s]).append(',').append(good).append(',')
                        .append(run.wasted()[s]).append(',').append(run.dropped()[s]).append(',').append(run.maxQueue()[s])
                        .append('\n');
            }
        }
        return b.toString();
    }

    static String recoveryText(Double recovery) {
        return recovery == null ? "did not recover within the run" : String.format(Locale.ROOT, "recovered after %.1f s", recovery);
    }

    /** The figures of one stalled run: recovery, amplification, wasted work. */
    static String figures(Run run) {
        long served = run.totalServed();
        return String.format(Locale.ROOT, "%s · amplification %.3f · wasted %d services (%.0f %% of the work)%s",
                recoveryText(run.recovery()), run.amplification(), run.totalWasted(),
                served == 0 ? 0.0 : 100.0 * run.totalWasted() / served,
                run.totalDropped() == 0 ? "" : " · " + run.totalDropped() + " dropped unserved");
    }

    static void rows(LabTable t, Result r) {
        Plan plan = r.plan();
        int inStall = r.runs().get(0).window(plan.stallAt(), plan.stallEnd())[0];
        t.add(LabRow.info("calls offered during the stall", String.format(Locale.ROOT, "λ × %d s = %.0f on average",
                STALL.toSeconds(), RATE * STALL.toSeconds()), inStall + " (this seed's schedule; the estimates below use it)",
                "the same seeded arrival times for every strategy"));
        for (Strategy s : Strategy.values()) {
            Run run = r.run(s, true);
            t.add(LabRow.info(s.label + ", stall", estimate(s, inStall).text(), figures(run),
                    "recovery: from the stall's end until goodput ≥ 95 % of offered in 3 consecutive 1 s windows"));
            t.add(LabRow.info("  per second: goodput % · max queue", "", join(run.goodputPercent()) + " · " + join(run.maxQueue(), plan.seconds()),
                    "goodput: calls offered in that second that succeeded"));
        }
        Run retry = r.run(Strategy.RETRY, true);
        t.add(LabRow.rule("A6 retry does not recover", String.format(Locale.ROOT, "never (λ × %d = %.0f/s > μ = %.0f/s)", MAX_ATTEMPTS, RATE * MAX_ATTEMPTS, CAPACITY), recoveryText(retry.recovery()),
                retry.recovery() == null, "no 3 good windows in the " + (plan.seconds() - plan.stallEnd()) + " s after the stall"));
        int lowest = Integer.MAX_VALUE;
        for (int sec = plan.stallEnd() + 1; sec < plan.seconds(); sec++) {
            lowest = Math.min(lowest, retry.arrivals()[sec]);
        }
        t.add(LabRow.rule("A6 retry: arrivals per second after the stall", String.format(Locale.ROOT, "≈ λ × %d = %.0f/s, above μ", MAX_ATTEMPTS, RATE * MAX_ATTEMPTS),
                "lowest " + lowest + "/s from " + (plan.stallEnd() + 1) + " s on: " + join(retry.arrivals(), plan.seconds()),
                lowest > CAPACITY, String.format(Locale.ROOT, "every second from %d s on above μ = %.0f", plan.stallEnd() + 1,
                        CAPACITY)));
        for (Strategy s : List.of(Strategy.THROTTLED, Strategy.BUDGET)) {
            Double rec = r.run(s, true).recovery();
            t.add(LabRow.rule(s.label + " recovers within the run", estimate(s, inStall).text(), recoveryText(rec), rec != null,
                    String.format(Locale.ROOT, "recovers, at the latest %.0f s after the stall (the model's figure leaves ≥ 2 s to spare)",
                            plan.latestRecovery())));
        }
        Double drop = r.run(Strategy.BUDGET_DROP, true).recovery();
        Double none = r.run(Strategy.NONE, true).recovery();
        t.add(LabRow.rule("budget + server drops expired: no later than no retry + 1 s",
                estimate(Strategy.BUDGET_DROP, inStall).text() + "; no retry " + estimate(Strategy.NONE, inStall).text(),
                recoveryText(drop) + "; no retry " + recoveryText(none).replace("recovered ", ""),
                drop != null && none != null && drop <= none + 1 + 1e-9, "both recover, budget + drop ≤ no retry + 1 s"));
        StringBuilder amp = new StringBuilder();
        boolean within = true;
        for (Strategy s : List.of(Strategy.BUDGET, Strategy.BUDGET_DROP)) {
            for (boolean stalled : new boolean[] {true, false}) {
                double a = r.run(s, stalled).amplification();
                within &= a <= 1 + BUDGET_RATIO + 1e-9;
                amp.append(amp.length() == 0 ? "" : "; ").append(s.label).append(stalled ? ", stall " : ", control ")
                        .append(String.format(Locale.ROOT, "%.3f", a));
            }
        }
        t.add(LabRow.rule("budget: total amplification", "≤ 1 + ratio = " + (1 + BUDGET_RATIO), amp.toString(), within,
                "≤ " + (1 + BUDGET_RATIO) + " in every budget run"));
        StringBuilder before = new StringBuilder();
        boolean healthyBefore = true;
        for (Strategy s : Strategy.values()) {
            double w = r.run(s, true).worstWindow(0, plan.stallAt());
            healthyBefore &= w >= RECOVERED_SHARE;
            before.append(before.length() == 0 ? "" : "; ").append(s.label).append(' ').append(pct(w));
        }
        t.add(LabRow.rule("before the stall: lowest goodput in a 1 s window", "≈ 100 % (ρ = 0.6, no queue to speak of)",
                before.toString(), healthyBefore, "≥ 95 % in every window before the stall, every strategy"));
        StringBuilder control = new StringBuilder();
        boolean healthy = true;
        for (Strategy s : Strategy.values()) {
            Run c = r.run(s, false);
            double w = c.worstWindow(0, plan.seconds());
            healthy &= w >= RECOVERED_SHARE;
            control.append(control.length() == 0 ? "" : "; ").append(s.label).append(' ').append(pct(w))
                    .append(String.format(Locale.ROOT, " ×%.3f", c.amplification()));
        }
        t.add(LabRow.info("offered on time", "every call at its seeded time",
                String.format(Locale.ROOT, "the latest call started %.0f ms after its time", r.runs().get(0).pacerLateNanos() / 1e6),
                "one thread starts every run's calls; a late call is started at once, and counted at its seeded time"));
        t.add(LabRow.rule("control, no stall: lowest goodput in a 1 s window · amplification", "≈ 100 % · ×1.000: nothing collapses without the trigger",
                control.toString(), healthy, "≥ 95 % in every window of the run, every strategy"));
    }

    private static String pct(double share) {
        return String.format(Locale.ROOT, "%.1f %%", 100 * share);
    }

    private static String join(int[] values) {
        return join(values, values.length);
    }

    private static String join(int[] values, int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < Math.min(n, values.length); i++) {
            b.append(i == 0 ? "" : " ").append(values[i]);
        }
        return b.toString();
    }

    /** The seeded Poisson arrival times (ns from the start) of a run of {@code seconds}. */
    static long[] arrivals(long seed, int seconds) {
        SplittableRandom random = new SplittableRandom(seed);
        List<Long> times = new ArrayList<>();
        double t = 0;
        while (true) {
            t += -Math.log(1 - random.nextDouble()) / RATE;
            if (t >= seconds) {
                break;
            }
            times.add((long) (t * 1e9));
        }
        return times.stream().mapToLong(Long::longValue).toArray();
    }

    /** The result: every run (stall and control per strategy, in {@link Strategy} order). */
    record Result(Plan plan, List<Run> runs) {

        Run run(Strategy s, boolean stalled) {
            return runs.stream().filter(r -> r.strategy() == s && r.stalled() == stalled).findFirst().orElseThrow();
        }
    }

    /**
     * Runs every strategy with and without the stall, all at once, each on its own in-process server
     * and channel, against the same seeded arrivals.
     */
    static Result run(String engine, long seed, Plan plan) {
        long[] offsets = arrivals(seed, plan.seconds());
        List<Strategy> strategies = List.of(Strategy.values());
        int runs = strategies.size() * 2;
        List<QueueingBackend> backends = new ArrayList<>();
        List<FlakyServer> servers = new ArrayList<>();
        List<ChannelSpec> channels = new ArrayList<>();
        List<Seconds> seconds = new ArrayList<>();
        try {
            for (int i = 0; i < runs; i++) {
                Strategy s = strategies.get(i % strategies.size());
                Seconds rec = new Seconds(plan.seconds() + (int) DEADLINE.toSeconds() + 10);
                seconds.add(rec);
                QueueingBackend b = new QueueingBackend(new QueueingBackend.Settings(WORKERS, SERVICE_TIME, QUEUE_LIMIT,
                        s.drops()), rec);
                backends.add(b);
                FlakyServer server = FlakyServer.startQueueing(seed, b);
                servers.add(server);
                channels.add(s.channel(name(i), server.address()));
            }
            try (LabContexts.Client client = LabContexts.client(engine, channels, Map.of())) {
                List<Channel> chans = new ArrayList<>();
                for (int i = 0; i < runs; i++) {
                    Channel ch = client.channel(name(i));
                    chans.add(ch);
                    // connect before the start (not counted: the recorders ignore what happens before it)
                    FlakyGrpc.newBlockingStub(ch).withDeadlineAfter(30, TimeUnit.SECONDS)
                            .call(FlakyRequest.newBuilder().setKey("r6-connect-" + i).build());
                }
                // the same load for a few seconds, not counted: compiled code and filled budget windows at the start
                long[] warmUp = arrivals(seed + 1, WARM_UP_SECONDS);
                CountDownLatch warm = new CountDownLatch(runs * warmUp.length);
                offer(chans, "r6-warm-up-", warmUp, System.nanoTime(), new boolean[runs][warmUp.length], warm, new long[1]);
                if (!warm.await(DEADLINE.toSeconds() + 60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("R6: warm-up calls still open a minute after their deadline");
                }
                // every run starts from an empty queue: if a cold start tipped a run over during the warm-up (a
                // trigger like any other), what it left waiting is work nobody waits for any more
                backends.forEach(b -> b.reset(Status.ABORTED.withDescription("R6: the warm-up is over")));
                long t0 = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
                seconds.forEach(rec -> rec.start(t0));
                for (int i = strategies.size(); i < runs; i++) {
                    // the second half are the stalled runs; the first half their controls
                    backends.get(i).stallBetween(t0 + TimeUnit.SECONDS.toNanos(plan.stallAt()),
                            t0 + TimeUnit.SECONDS.toNanos(plan.stallEnd()));
                }
                boolean[][] ok = new boolean[runs][offsets.length];
                CountDownLatch ended = new CountDownLatch(runs * offsets.length);
                long[] late = new long[1];
                offer(chans, "r6-", offsets, t0, ok, ended, late);
                // every call ends by its deadline
                if (!ended.await(DEADLINE.toSeconds() + 60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("R6: calls still open a minute after their deadline");
                }
                List<Run> result = new ArrayList<>();
                for (int i = 0; i < runs; i++) {
                    Seconds rec = seconds.get(i);
                    int[][] arrays;
                    synchronized (backends.get(i)) {
                        arrays = new int[][] {copy(rec.arrivals), copy(rec.served), copy(rec.wasted), copy(rec.dropped),
                                copy(rec.maxQueue)};
                    }
                    result.add(new Run(strategies.get(i % strategies.size()), i >= strategies.size(), plan, offsets, ok[i],
                            arrays[0], arrays[1], arrays[2], arrays[3], arrays[4], late[0]));
                }
                // stalled runs first, in strategy order, then the controls
                List<Run> ordered = new ArrayList<>(result.subList(strategies.size(), runs));
                ordered.addAll(result.subList(0, strategies.size()));
                return new Result(plan, ordered);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("R6 interrupted", e);
        } finally {
            servers.forEach(FlakyServer::close);
            backends.forEach(QueueingBackend::close);
        }
    }

    /**
     * Starts, on this thread, every run's call of each arrival at {@code t0} + its offset (a late start
     * goes at once: the schedule is kept, not shifted); {@code late[0]} gets the latest start's delay.
     */
    private static void offer(List<Channel> chans, String prefix, long[] offsets, long t0, boolean[][] ok, CountDownLatch ended,
            long[] late) {
        for (int k = 0; k < offsets.length; k++) {
            long at = t0 + offsets[k];
            long wait;
            while ((wait = at - System.nanoTime()) > 0) {
                LockSupport.parkNanos(wait);
            }
            late[0] = Math.max(late[0], -wait);
            for (int i = 0; i < chans.size(); i++) {
                fire(chans.get(i), prefix + i + "-" + k, ok[i], k, ended);
            }
        }
    }

    private static String name(int i) {
        return "r6-" + i;
    }

    private static int[] copy(AtomicIntegerArray a) {
        int[] c = new int[a.length()];
        for (int i = 0; i < c.length; i++) {
            c[i] = a.get(i);
        }
        return c;
    }

    private static void fire(Channel ch, String key, boolean[] ok, int k, CountDownLatch ended) {
        FlakyGrpc.newStub(ch).withDeadlineAfter(DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
                .call(FlakyRequest.newBuilder().setKey(key).build(), new StreamObserver<>() {
                    @Override
                    public void onNext(FlakyReply value) {
                    }

                    @Override
                    public void onError(Throwable t) {
                        ended.countDown();
                    }

                    @Override
                    public void onCompleted() {
                        ok[k] = true; // published to the reader by the latch
                        ended.countDown();
                    }
                });
    }
}
