package io.github.grpcretry.reliability;

import static io.github.grpcretry.testing.ScriptedServer.Action;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.EngineTestAccess;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.reliability.Fixtures.Client;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.SimpleCalls;
import io.github.grpcretry.testing.SimpleCalls.Handle;
import io.grpc.CallOptions;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Test;

/**
 * Soak: many calls (default 20 000; {@code -Dsoak.calls=100000} for the full run), 64 in flight at a
 * time ({@code -Dsoak.concurrency}), about 20 % of them meeting failures, random cancellations and
 * deadlines, all four RPC types, over Netty loopback through the interceptor engine.
 *
 * <p>Each call picks a plan the server follows (sent as a request header), so its outcome is known:
 * a call without cancellation or deadline must end with exactly the plan's status; a cancelled one
 * may end CANCELLED instead (or, when the cancel crosses a failed attempt's close, with that
 * attempt's UNAVAILABLE), one with a deadline DEADLINE_EXCEEDED (or, when a retry would not fit in
 * the deadline, the last attempt's UNAVAILABLE). Every call keeps the call contract and every
 * response matches its request.
 *
 * <p>Afterwards: zero hung calls, zero outstanding timers, zero buffered bytes, no thread left that
 * was not there before, and the heap after GC within a small margin of its baseline.
 */
class SoakTest {

    static final int CALLS = Integer.getInteger("soak.calls", 20_000);
    static final int CONCURRENCY = Integer.getInteger("soak.concurrency", 64);
    static final long SEED = Long.getLong("soak.seed", 20240611L);
    static final long HEAP_MARGIN_BYTES = 16L * 1024 * 1024;

    /** Share of the calls (in %) made on the hedged channel. */
    static final int HEDGED_PERCENT = Integer.getInteger("soak.hedged.percent", 25);

    static final Metadata.Key<String> PLAN = Metadata.Key.of("x-plan", Metadata.ASCII_STRING_MARSHALLER);

    /** What the server does with a call, and the status the call must end with. */
    enum Plan {
        OK(Status.Code.OK, false),
        FAIL_FIRST(Status.Code.OK, true),
        FAIL_FIRST_ON_HALF_CLOSE(Status.Code.OK, true),
        PUSHBACK_5MS_THEN_OK(Status.Code.OK, true),
        ALWAYS_UNAVAILABLE(Status.Code.UNAVAILABLE, true),
        INTERNAL(Status.Code.INTERNAL, false),
        HEADERS_THEN_UNAVAILABLE(Status.Code.UNAVAILABLE, false),
        PUSHBACK_STOP(Status.Code.UNAVAILABLE, false),
        STREAM_THEN_UNAVAILABLE(Status.Code.UNAVAILABLE, false);

        final Status.Code expected;
        /** A retry follows a failure (so a deadline may end the call with the failure's status). */
        final boolean retries;

        Plan(Status.Code expected, boolean retries) {
            this.expected = expected;
            this.retries = retries;
        }
    }

    private static Action action(ScriptedServer.Arrival a) {
        Plan plan = Plan.valueOf(a.header("x-plan"));
        boolean first = a.previousAttempts == null;
        return switch (plan) {
            case OK -> a.index % 10 == 0 ? Action.ok().delay(1 + a.index % 5) : Action.ok();
            case FAIL_FIRST -> first ? Action.fail(Status.Code.UNAVAILABLE) : Action.ok();
            case FAIL_FIRST_ON_HALF_CLOSE -> first ? Action.failOnHalfClose(Status.Code.UNAVAILABLE) : Action.ok();
            case PUSHBACK_5MS_THEN_OK -> first ? Action.fail(Status.Code.UNAVAILABLE).pushback("5") : Action.ok();
            case ALWAYS_UNAVAILABLE -> Action.fail(Status.Code.UNAVAILABLE);
            case INTERNAL -> Action.fail(Status.Code.INTERNAL);
            case HEADERS_THEN_UNAVAILABLE -> Action.fail(Status.Code.UNAVAILABLE).headersFirst();
            case PUSHBACK_STOP -> Action.fail(Status.Code.UNAVAILABLE).pushback("-1");
            case STREAM_THEN_UNAVAILABLE -> Action.ok().responses(2).thenFail(Status.Code.UNAVAILABLE);
        };
    }

    /** About 20 % of the calls meet a failure. */
    private static Plan pick(Random random, MethodDescriptor<?, ?> method) {
        int r = random.nextInt(100);
        if (r < 80) {
            return Plan.OK;
        }
        Plan[] failing = {Plan.FAIL_FIRST, Plan.FAIL_FIRST_ON_HALF_CLOSE, Plan.PUSHBACK_5MS_THEN_OK,
                Plan.ALWAYS_UNAVAILABLE, Plan.INTERNAL, Plan.HEADERS_THEN_UNAVAILABLE, Plan.PUSHBACK_STOP,
                Plan.STREAM_THEN_UNAVAILABLE};
        Plan p = failing[(r - 80) % failing.length];
        if (p == Plan.STREAM_THEN_UNAVAILABLE && method.getType() != MethodDescriptor.MethodType.SERVER_STREAMING) {
            return Plan.FAIL_FIRST;
        }
        return p;
    }

    @Test
    void soak() throws Exception {
        Set<Thread> threadsBefore = liveThreads();
        warmUp();
        long heapBefore = heapAfterGc();

        RetryScheduler scheduler = RetryScheduler.create(2, "soak");
        ScriptedServer server = ScriptedServer.startNetty();
        server.script(SoakTest::action);
        Client client = Fixtures.netty(server.target(), Fixtures.channelConfig("soak",
                Fixtures.service(Fixtures.policy(4, 5, 50, null, Status.Code.UNAVAILABLE), null)), scheduler);
        Client hedgedClient = Fixtures.netty(server.target(), hedgedConfig("soak-hedged"), scheduler);
        ScheduledExecutorService cancels = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "soak-cancels");
            t.setDaemon(true);
            return t;
        });

        Semaphore inFlight = new Semaphore(CONCURRENCY);
        Map<String, Boolean> open = new ConcurrentHashMap<>();
        ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
        AtomicLong doubleCloses = new AtomicLong();
        AtomicLongArray codes = new AtomicLongArray(Status.Code.values().length);
        AtomicLong cancelled = new AtomicLong();
        AtomicLong withDeadline = new AtomicLong();
        AtomicLong failingPlans = new AtomicLong();
        AtomicLong onHedgedChannel = new AtomicLong();
        Random random = new Random(SEED);
        long start = System.nanoTime();
        try {
            for (int i = 0; i < CALLS; i++) {
                inFlight.acquire();
                if (i % 5000 == 4999) {
                    server.reset(); // the server's arrival log is not part of what is measured
                }
                String id = "s" + i;
                MethodDescriptor<SimpleRequest, SimpleResponse> m = SimpleCalls.ALL.get(random.nextInt(4));
                Plan plan = pick(random, m);
                boolean hedgedChannel = random.nextInt(100) < HEDGED_PERCENT;
                if (hedgedChannel) {
                    onHedgedChannel.incrementAndGet();
                }
                if (plan != Plan.OK) {
                    failingPlans.incrementAndGet();
                }
                int mode = random.nextInt(100); // < 5 cancel, < 10 deadline
                int count = m.getType().clientSendsOneMessage() ? 1 : 1 + random.nextInt(3);
                List<String> requests = SimpleCalls.messages(id, count, random.nextInt(20) == 0 ? 8 * 1024 : 0);
                CallOptions options = CallOptions.DEFAULT;
                Set<Status.Code> allowed = EnumSet.of(plan.expected);
                if (mode < 5) {
                    allowed.add(Status.Code.CANCELLED);
                    if (plan.retries) {
                        // a cancel racing the close of a failed attempt: the call ends with that close,
                        // as any gRPC call whose cancel crosses the server's status does
                        allowed.add(Status.Code.UNAVAILABLE);
                    }
                    cancelled.incrementAndGet();
                } else if (mode < 10) {
                    options = options.withDeadlineAfter(1 + random.nextInt(20), TimeUnit.MILLISECONDS);
                    allowed.add(Status.Code.DEADLINE_EXCEEDED);
                    if (plan.retries) {
                        allowed.add(Status.Code.UNAVAILABLE);
                    }
                    withDeadline.incrementAndGet();
                } else {
                    options = options.withDeadlineAfter(60, TimeUnit.SECONDS); // bounds a hang, never reached
                }
                Metadata headers = new Metadata();
                headers.put(PLAN, plan.name());
                open.put(id, Boolean.TRUE);
                Handle h = SimpleCalls.start((hedgedChannel ? hedgedClient : client).channel(), m, options, id, requests, 3, headers, listener -> {
                    if (open.remove(id) == null) {
                        doubleCloses.incrementAndGet(); // a second close (the first one removed the call)
                        return;
                    }
                    inFlight.release();
                    Status s = listener.status();
                    codes.incrementAndGet(s.getCode().ordinal());
                    List<String> broken = listener.violations();
                    if (!broken.isEmpty() && problems.size() < 50) {
                        problems.add(id + " " + m.getBareMethodName() + " " + plan + ": " + broken);
                    }
                    if (!allowed.contains(s.getCode()) && problems.size() < 50) {
                        problems.add(id + " " + m.getBareMethodName() + " " + plan + " ended " + s + ", allowed " + allowed);
                    }
                });
                h.send(requests);
                // the cancel is scheduled after the half-close: a ClientCall refuses halfClose() once
                // cancelled (grpc-java's ClientCallImpl throws "call was cancelled"), with or without the engine
                h.halfClose();
                if (mode < 5) {
                    cancels.schedule(() -> h.call.cancel("soak cancel", null), random.nextInt(15),
                            TimeUnit.MILLISECONDS);
                }
            }
            // every call must close: wait for the last ones
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!open.isEmpty() && System.nanoTime() < end) {
                Thread.sleep(10);
            }
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            int hung = open.size();
            assertThat(hung).as("hung calls: " + open.keySet().stream().limit(10).toList()).isZero();
            assertThat(problems).as("contract or outcome problems").isEmpty();
            assertThat(doubleCloses.get()).as("calls closed twice").isZero();
            Fixtures.waitFor("no timer outstanding", 5000, () -> EngineTestAccess.outstandingTimers(scheduler) == 0);
            long timers = EngineTestAccess.outstandingTimers(scheduler);
            long buffered = client.bufferPool().used() + hedgedClient.bufferPool().used();
            assertThat(buffered).as("bytes buffered").isZero();
            assertThat(client.events().callsEnded.get() + hedgedClient.events().callsEnded.get())
                    .isEqualTo(client.events().callsStarted.get() + hedgedClient.events().callsStarted.get())
                    .isEqualTo(CALLS);
            assertThat(hedgedClient.events().callsStarted.get()).isEqualTo(onHedgedChannel.get());
            assertThat(client.events().attemptsEnded.get()).isEqualTo(client.events().attemptsStarted.get());
            // cancelled hedges report their end when their cancellation completes, possibly after the call's close
            Client hc = hedgedClient;
            Fixtures.waitFor("every hedged attempt ended", 5000,
                    () -> hc.events().attemptsEnded.get() == hc.events().attemptsStarted.get());
            // no attempt left running on the server (arrivals since its last log reset): answered or cancelled
            ScriptedServer srv = server;
            Fixtures.waitFor("every attempt on the server answered or cancelled", 5000,
                    () -> srv.arrivals().stream().allMatch(a -> a.closedByServer || a.cancelled));
            long serverAttempts = server.arrivalCount();
            Map<Status.Code, Long> byCode = new EnumMap<>(Status.Code.class);
            for (Status.Code c : Status.Code.values()) {
                if (codes.get(c.ordinal()) > 0) {
                    byCode.put(c, codes.get(c.ordinal()));
                }
            }
            long attempts = client.events().attemptsStarted.get() + hedgedClient.events().attemptsStarted.get();
            long hedges = hedgedClient.events().attempts(io.github.grpcretry.attempt.AttemptKind.HEDGE);
            long hedgedRetries = hedgedClient.events().attempts(io.github.grpcretry.attempt.AttemptKind.RETRY);
            Map<io.github.grpcretry.attempt.SuppressionReason, Long> suppressed = client.events().suppressions();
            hedgedClient.events().suppressions().forEach((k, v) -> suppressed.merge(k, v, Long::sum));
            client.close();
            hedgedClient.close();
            hedgedClient = null;
            server.close();
            cancels.shutdownNow();
            cancels.awaitTermination(5, TimeUnit.SECONDS);
            scheduler.close();
            client = null;
            server = null;

            List<String> leftThreads = threadsLeftOver(threadsBefore);
            long heapAfter = heapAfterGc();
            Figures.record("soak", CALLS + " calls (" + failingPlans.get() + " with failures, " + cancelled.get()
                    + " cancelled at random, " + withDeadline.get() + " with 1-20 ms deadlines), concurrency " + CONCURRENCY
                    + ", " + attempts + " attempts, " + elapsedMs + " ms (" + (CALLS * 1000L / Math.max(1, elapsedMs))
                    + " calls/s); " + onHedgedChannel.get() + " calls on the hedged channel (UnaryRpc and ServerStreamingRpc"
                    + " hedged: " + hedges + " hedges sent; its other methods retried: " + hedgedRetries + " retries)"
                    + "; outcomes " + byCode + "; suppressed " + suppressed + "; hung " + hung + ", timers " + timers + ", buffered bytes " + buffered
                    + ", threads left " + leftThreads.size() + ", heap after GC " + mib(heapBefore) + " -> "
                    + mib(heapAfter) + " MiB");
            assertThat(leftThreads).as("threads that were not there before").isEmpty();
            assertThat(heapAfter).as("heap after GC (baseline " + heapBefore + ")")
                    .isLessThanOrEqualTo(heapBefore + HEAP_MARGIN_BYTES);
        } finally {
            cancels.shutdownNow();
            if (client != null) {
                client.close();
            }
            if (hedgedClient != null) {
                hedgedClient.close();
            }
            if (server != null) {
                server.close();
            }
            scheduler.close();
        }
    }

    /**
     * The hedged channel: UnaryRpc and ServerStreamingRpc under a hedging policy (3 attempts, a hedge
     * every 5 ms while none has answered, UNAVAILABLE non-fatal), the other methods retried as on the
     * main channel. The plans' outcomes are the same under both policies: a first attempt's
     * UNAVAILABLE is overtaken by a hedge sent at once, INTERNAL is fatal, headers or a message
     * commit, a pushback "stop" freezes hedging, and always-UNAVAILABLE spends the attempts.
     */
    static io.github.grpcretry.policy.ChannelRetryConfig hedgedConfig(String name) {
        List<io.github.grpcretry.policy.MethodConfig> entries = new ArrayList<>();
        entries.add(new io.github.grpcretry.policy.MethodConfig(List.of(io.github.grpcretry.policy.MethodName.of(
                Fixtures.SERVICE, null)), null, null, null, null, Fixtures.policy(4, 5, 50, null, Status.Code.UNAVAILABLE),
                null));
        entries.add(new io.github.grpcretry.policy.MethodConfig(List.of(
                io.github.grpcretry.policy.MethodName.of(Fixtures.SERVICE, "UnaryRpc"),
                io.github.grpcretry.policy.MethodName.of(Fixtures.SERVICE, "ServerStreamingRpc")), null, null, null, null,
                null, Fixtures.hedging(3, 5, Status.Code.UNAVAILABLE)));
        return Fixtures.channelConfig(name, new io.github.grpcretry.policy.ServiceConfig(entries, null));
    }

    /** Calls on a channel of its own, so classes and pools are loaded before the baseline is taken. */
    private static void warmUp() throws Exception {
        RetryScheduler scheduler = RetryScheduler.create(2, "soak-warmup");
        ScriptedServer server = ScriptedServer.startNetty();
        server.script(SoakTest::action);
        // the hedged configuration: both engines' classes are loaded before the baseline
        Client client = Fixtures.netty(server.target(), hedgedConfig("warm"), scheduler);
        try {
            Random random = new Random(1);
            List<Handle> handles = new ArrayList<>();
            for (int i = 0; i < 2000; i++) {
                MethodDescriptor<SimpleRequest, SimpleResponse> m = SimpleCalls.ALL.get(i % 4);
                Metadata headers = new Metadata();
                headers.put(PLAN, pick(random, m).name());
                List<String> requests = SimpleCalls.messages("w" + i, 2, 0);
                if (m.getType().clientSendsOneMessage()) {
                    requests = requests.subList(0, 1);
                }
                handles.add(SimpleCalls.start(client.channel(), m, CallOptions.DEFAULT, "w" + i, requests, 3, headers)
                        .send(requests).halfClose());
                if (handles.size() == 64) {
                    for (Handle h : handles) {
                        h.listener.awaitClose(30, TimeUnit.SECONDS);
                    }
                    handles.clear();
                }
            }
            for (Handle h : handles) {
                h.listener.awaitClose(30, TimeUnit.SECONDS);
            }
        } finally {
            client.close();
            server.close();
            scheduler.close();
        }
    }

    private static Set<Thread> liveThreads() {
        return new HashSet<>(Thread.getAllStackTraces().keySet());
    }

    /**
     * Threads alive now that were not alive in {@code before}, waiting up to 15 s for pools to wind
     * down (grpc-java releases its shared executors and event loops about a second after their last
     * user). The JIT's compiler threads come and go on their own and are not counted. Nor are idle
     * threads of grpc-java's shared cached executor ({@code grpc-default-executor-*}, parked in the
     * pool) while another user in this JVM (an earlier test's channel or server) still holds that
     * executor: the pool then keeps idle threads for its 60 s keep-alive, and they run nothing.
     */
    private static List<String> threadsLeftOver(Set<Thread> before) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        List<String> left;
        do {
            left = new ArrayList<>();
            for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
                Thread t = e.getKey();
                if (!before.contains(t) && t.isAlive() && !t.getName().contains("CompilerThread")
                        && !idleInSharedPool(t, e.getValue())) {
                    left.add(t.getName());
                }
            }
            if (left.isEmpty()) {
                return left;
            }
            Thread.sleep(100);
        } while (System.nanoTime() < end);
        return left;
    }

    private static boolean idleInSharedPool(Thread t, StackTraceElement[] stack) {
        if (!t.getName().startsWith("grpc-default-executor-")) {
            return false;
        }
        for (StackTraceElement f : stack) {
            if (f.getClassName().equals("java.util.concurrent.ThreadPoolExecutor") && f.getMethodName().equals("getTask")) {
                return true;
            }
        }
        return false;
    }

    private static long heapAfterGc() throws InterruptedException {
        long best = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(100);
            best = Math.min(best, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return best;
    }

    private static String mib(long bytes) {
        return String.format("%.1f", bytes / (1024.0 * 1024.0));
    }
}
