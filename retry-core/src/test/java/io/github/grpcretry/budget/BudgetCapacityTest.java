package io.github.grpcretry.budget;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.MoreExecutors;
import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.attempt.DelaySource;
import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * R3's capacity-limited run as a test of the bound: a client offers 120 calls/s to a server that
 * serves 120 calls/s, except in seconds 2 and 3, when it can serve only half of that (the overload)
 * and turns the rest away with UNAVAILABLE. Up to 3 attempts per call; the budget run has ratio 10 %,
 * no floor and the shortest window (ttl 1 s), so "during the overload" is one window.
 *
 * <p>The bound is checked at every admission against the budget's own reading of its clock (the
 * reading its {@code tryAcquireRetry} made, taken from the clock it was given), so a thread that is
 * descheduled between the admission and its event does not move the window; the calls are counted
 * over the window the budget used, up to the retry's event. The per-second checks count server
 * arrivals by attempt (first attempts against retries), not against a fixed rate, so a pacer that
 * catches up after a stall of the machine does not break them.
 */
class BudgetCapacityTest {

    private static final int SECONDS = 5;
    private static final double CAPACITY_PER_SECOND = 120;
    private static final double OVERLOAD_PER_SECOND = 60; // seconds 2 and 3
    private static final double BURST = 12;
    private static final long SECOND = 1_000_000_000L;

    /** One client and its server, driven on the same timeline. */
    static final class Run {
        final String name;
        final ScriptedServer server;
        final ManagedChannel channel;
        final ConcurrentLinkedQueue<Long> calls = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<Long> retries = new ConcurrentLinkedQueue<>();
        /** Per retry: the budget's clock reading when it admitted the retry, and the time of its event. */
        final ConcurrentLinkedQueue<long[]> admissions = new ConcurrentLinkedQueue<>();
        /** The budget's last clock reading on each thread, and its first (its origin). */
        private final ThreadLocal<long[]> lastReading = ThreadLocal.withInitial(() -> new long[1]);
        final java.util.concurrent.atomic.AtomicLong origin = new java.util.concurrent.atomic.AtomicLong(Long.MIN_VALUE);
        final ConcurrentLinkedQueue<long[]> outcomes = new ConcurrentLinkedQueue<>(); // start, ok?1:0
        /** First attempts the server turned away during the timeline. */
        final AtomicInteger refusedFirstAttempts = new AtomicInteger();
        private double tokens = BURST;
        private long lastRefill;
        volatile long start;

        Run(String name, RetryBudgetPolicy budget, RetryScheduler scheduler) throws Exception {
            this.name = name;
            server = ScriptedServer.start("capacity-" + name + "-" + UUID.randomUUID());
            server.script(this::serve);
            RetryPolicy policy = new RetryPolicy(3, Duration.ofMillis(20), Duration.ofMillis(200), 2,
                    Set.of(Status.Code.UNAVAILABLE), null);
            ServiceConfig sc = new ServiceConfig(List.of(new MethodConfig(List.of(MethodName.of("grpc.testing.SimpleService",
                    null)), null, null, null, null, policy, null)), null);
            ChannelRetryConfig config = ChannelRetryConfig.of(name, sc).withBudget(budget);
            java.util.function.LongSupplier clock = () -> {
                long t = System.nanoTime();
                lastReading.get()[0] = t;
                origin.compareAndSet(Long.MIN_VALUE, t);
                return t;
            };
            channel = InProcessChannelBuilder.forName(server.inProcessName())
                    .intercept(RetryingClientInterceptor.builder(config)
                            .budget(budget == null ? null : new RetryBudget(budget, clock))
                            .scheduler(scheduler)
                            .eventListener(new RetryEventListener() {
                                @Override
                                public void callStarted(CallTarget target) {
                                    calls.add(System.nanoTime());
                                }

                                @Override
                                public void retryScheduled(CallTarget target, int nextAttemptNumber, long delayNanos,
                                        DelaySource source) {
                                    long now = System.nanoTime();
                                    retries.add(now);
                                    // the engine admits a retry (tryAcquireRetry reads the clock) and reports it on
                                    // the same thread, with no other reading of the budget's clock in between
                                    admissions.add(new long[] {lastReading.get()[0], now});
                                }
                            }).build())
                    .build();
        }

        /** The server's capacity: a token bucket of 100 ms worth of calls, refilled at 120/s (60/s in seconds 2-3). */
        private synchronized Action serve(ScriptedServer.Arrival a) {
            if (start == 0) {
                return Action.ok(); // warming up, before the timeline
            }
            long second = (a.nanoTime - start) / SECOND;
            double rate = second == 2 || second == 3 ? OVERLOAD_PER_SECOND : CAPACITY_PER_SECOND;
            if (lastRefill != 0) {
                tokens = Math.min(BURST, tokens + rate * (a.nanoTime - lastRefill) / SECOND);
            }
            lastRefill = a.nanoTime;
            if (tokens >= 1) {
                tokens -= 1;
                return Action.ok();
            }
            if (a.previousAttempts == null) {
                refusedFirstAttempts.incrementAndGet();
            }
            return Action.fail(Status.Code.UNAVAILABLE);
        }

        void fire(CountDownLatch done) {
            long t = System.nanoTime();
            Futures.addCallback(SimpleServiceGrpc.newFutureStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
                    .unaryRpc(SimpleRequest.newBuilder().setRequestMessage(name).build()), new FutureCallback<>() {
                        @Override
                        public void onSuccess(SimpleResponse result) {
                            outcomes.add(new long[] {t, 1});
                            done.countDown();
                        }

                        @Override
                        public void onFailure(Throwable e) {
                            outcomes.add(new long[] {t, 0});
                            done.countDown();
                        }
                    }, MoreExecutors.directExecutor());
        }

        /** A few calls before the timeline (connection, class loading), then a fresh server record and a full bucket. */
        void warmUp() {
            for (int i = 0; i < 20; i++) {
                SimpleServiceGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
                        .unaryRpc(SimpleRequest.newBuilder().setRequestMessage("warm-up").build());
            }
            server.reset();
            synchronized (this) {
                tokens = BURST;
                lastRefill = 0;
            }
        }

        /** Server arrivals per second of the run: first attempts ({@code retries} false) or retries. */
        int[] arrivalsPerSecond(boolean retries) {
            int[] out = new int[SECONDS];
            for (ScriptedServer.Arrival a : server.arrivals()) {
                int s = (int) Math.floorDiv(a.nanoTime - start, SECOND);
                if (s >= 0 && s < SECONDS && (a.previousAttempts != null) == retries) {
                    out[s]++;
                }
            }
            return out;
        }

        int[] receivedPerSecond() {
            int[] out = new int[SECONDS];
            for (ScriptedServer.Arrival a : server.arrivals()) {
                int s = (int) ((a.nanoTime - start) / SECOND);
                if (s >= 0 && s < SECONDS) {
                    out[s]++;
                }
            }
            return out;
        }

        int[] successPercentPerSecond() {
            int[] ok = new int[SECONDS];
            int[] all = new int[SECONDS];
            for (long[] o : outcomes) {
                int s = (int) ((o[0] - start) / SECOND);
                if (s >= 0 && s < SECONDS) {
                    all[s]++;
                    ok[s] += (int) o[1];
                }
            }
            int[] out = new int[SECONDS];
            for (int s = 0; s < SECONDS; s++) {
                out[s] = all[s] == 0 ? 0 : Math.round(100f * ok[s] / all[s]);
            }
            return out;
        }

        long count(ConcurrentLinkedQueue<Long> times, long fromNanos, long toNanos) {
            return times.stream().filter(t -> t >= fromNanos && t <= toNanos).count();
        }

        void close() {
            channel.shutdownNow();
            server.close();
        }
    }

    @Test
    void duringTheOverloadRetriesStayWithinTheRatioOfCalls() throws Exception {
        RetryScheduler scheduler = RetryScheduler.create(1, "budget-capacity");
        ScheduledExecutorService clock = Executors.newSingleThreadScheduledExecutor();
        double ratio = 0.1;
        Run unlimited = new Run("unlimited", null, scheduler);
        Run budget = new Run("budget", new RetryBudgetPolicy(ratio, 0, Duration.ofSeconds(1)), scheduler);
        try {
            unlimited.warmUp();
            budget.warmUp();
            int total = 120 * SECONDS;
            CountDownLatch done = new CountDownLatch(2 * total);
            AtomicInteger fired = new AtomicInteger();
            long start = System.nanoTime();
            unlimited.start = start;
            budget.start = start;
            CountDownLatch allFired = new CountDownLatch(1);
            ScheduledFuture<?> pacer = clock.scheduleAtFixedRate(() -> {
                if (fired.get() >= total) {
                    allFired.countDown();
                    return;
                }
                fired.incrementAndGet();
                unlimited.fire(done);
                budget.fire(done);
            }, 0, SECOND / 120, TimeUnit.NANOSECONDS);
            assertThat(allFired.await(SECONDS + 10, TimeUnit.SECONDS)).isTrue();
            pacer.cancel(false);
            assertThat(done.await(20, TimeUnit.SECONDS)).isTrue();

            StringBuilder report = new StringBuilder("Capacity-limited run (120 calls/s, half capacity in seconds 2-3):\n");
            for (Run r : List.of(unlimited, budget)) {
                report.append(String.format(Locale.ROOT, "%-10s received/s %s, success %% %s%n", r.name,
                        java.util.Arrays.toString(r.receivedPerSecond()),
                        java.util.Arrays.toString(r.successPercentPerSecond())));
            }
            long overloadFrom = start + 2 * SECOND;
            long overloadTo = start + 4 * SECOND;
            long budgetRetries = budget.count(budget.retries, overloadFrom, overloadTo);
            long budgetCalls = budget.count(budget.calls, overloadFrom, overloadTo);
            long unlimitedRetries = unlimited.count(unlimited.retries, overloadFrom, overloadTo);
            long unlimitedCalls = unlimited.count(unlimited.calls, overloadFrom, overloadTo);
            report.append(String.format(Locale.ROOT,
                    "retries during seconds 2-3: unlimited %d for %d calls, budget 10 %% %d for %d calls;"
                            + " first attempts refused: unlimited %d, budget %d%n",
                    unlimitedRetries, unlimitedCalls, budgetRetries, budgetCalls, unlimited.refusedFirstAttempts.get(),
                    budget.refusedFirstAttempts.get()));
            System.out.print(report);

            // the overload turns first attempts away, and the unlimited run retries every one of them (its policy
            // retries UNAVAILABLE, and a 200 ms backoff always fits the 5 s deadline): retries pile up with the
            // refusals, not with a ratio of the calls
            assertThat(unlimited.refusedFirstAttempts.get()).as("first attempts refused in the overload").isPositive();
            assertThat((long) unlimited.retries.size()).as("the overload makes unlimited retries pile up")
                    .isGreaterThanOrEqualTo(unlimited.refusedFirstAttempts.get());
            // the bound, at every admission: the retries admitted in the budget's window (the slot of the admission's
            // clock reading and the 19 before it) are at most 10 % of the calls since that window began, counted up to
            // the retry's event (one retry of slack for admissions that raced)
            long slot = SECOND / 20;
            long origin = budget.origin.get();
            assertThat(budget.admissions).hasSameSizeAs(budget.retries);
            for (long[] r : budget.admissions) {
                long windowStart = origin + (Math.floorDiv(r[0] - origin, slot) - 19) * slot;
                long inWindow = budget.admissions.stream().filter(x -> x[0] >= windowStart && x[0] <= r[0]).count();
                long callsInWindow = budget.count(budget.calls, windowStart, r[1]);
                assertThat(inWindow).as("retries in the window ending %d ms into the run", (r[0] - start) / 1_000_000)
                        .isLessThanOrEqualTo((long) Math.floor(ratio * callsInWindow) + 1);
            }
            // and so during the overload as a whole: its two windows (admitted in seconds 2 and 3) each hold at most
            // 10 % of the calls of the second before and their own, plus the slack of each window
            long admitted = budget.admissions.stream().filter(x -> x[0] >= overloadFrom && x[0] < overloadTo).count();
            long callsBefore = budget.count(budget.calls, overloadFrom - SECOND, overloadTo);
            assertThat(admitted).as("retries admitted in seconds 2-3 (%d calls since second 1)", callsBefore)
                    .isLessThanOrEqualTo((long) Math.floor(ratio * (callsBefore + budgetCalls)) + 2);
            // per second at the server: retries against the first attempts of that second and the two before it
            // (each retry's window reaches back a second from its admission, and a backoff of at most 200 ms
            // separates the admission from the arrival), never the storm of the unlimited run
            int[] firsts = budget.arrivalsPerSecond(false);
            int[] retried = budget.arrivalsPerSecond(true);
            for (int s = 0; s < SECONDS; s++) {
                int around = firsts[s] + (s > 0 ? firsts[s - 1] : 0) + (s > 1 ? firsts[s - 2] : 0);
                assertThat(retried[s]).as("budget run: retries received in second %d (first attempts %s)", s,
                        java.util.Arrays.toString(firsts)).isLessThanOrEqualTo((int) Math.floor(ratio * around) + 2);
            }
        } finally {
            clock.shutdownNow();
            unlimited.close();
            budget.close();
            scheduler.close();
        }
    }
}
