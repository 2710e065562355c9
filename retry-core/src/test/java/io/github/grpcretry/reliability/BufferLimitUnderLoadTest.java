package io.github.grpcretry.reliability;

import static io.github.grpcretry.testing.ScriptedServer.Action;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.EngineTestAccess;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.attempt.SuppressionReason;
import io.github.grpcretry.internal.commit.RetryBufferPool;
import io.github.grpcretry.reliability.Fixtures.Client;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.SimpleCalls;
import io.github.grpcretry.testing.SimpleCalls.Handle;
import io.grpc.CallOptions;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The channel-wide retry buffer limit under load (docs/design.md §2): many concurrent calls carrying
 * large requests. A sampler reads the pool continuously: the bytes held never pass its capacity.
 * Calls that do not fit are committed, not failed: they go on and end as their single attempt
 * ends; only the calls that kept their buffer can be retried.
 */
class BufferLimitUnderLoadTest {

    private static final int CALLS = 64;
    private static final int MESSAGES = 3;
    private static final int MESSAGE_CHARS = 60 * 1024;
    private static final long PER_RPC_LIMIT = 256 * 1024;
    private static final long CHANNEL_LIMIT = 1024 * 1024;

    /** Reads {@code pool} in a loop until stopped; keeps the high-water mark and the samples above capacity. */
    static final class Sampler implements AutoCloseable {
        final AtomicLong max = new AtomicLong();
        final AtomicLong over = new AtomicLong();
        final AtomicLong samples = new AtomicLong();
        private final AtomicBoolean stop = new AtomicBoolean();
        private final Thread thread;

        Sampler(RetryBufferPool pool) {
            thread = new Thread(() -> {
                long localMax = 0;
                long n = 0;
                while (!stop.get()) {
                    long used = pool.used();
                    if (used > localMax) {
                        localMax = used;
                        max.set(localMax);
                    }
                    if (used > pool.capacity()) {
                        over.incrementAndGet();
                    }
                    n++;
                    if ((n & 15) == 0) {
                        samples.set(n);
                        // a short pause every 16 reads, so the sampler does not take a whole core from the calls
                        java.util.concurrent.locks.LockSupport.parkNanos(20_000);
                    }
                }
                samples.set(n);
            }, "buffer-sampler");
            thread.setDaemon(true);
            thread.start();
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            thread.join(5000);
        }
    }

    @Test
    void channelLimitHoldsUnderLoadAndExcessCallsAreCommitted() throws Exception {
        RetryScheduler scheduler = RetryScheduler.create(2, "buffer-load");
        ScriptedServer server = ScriptedServer.startNetty();
        Client client = Fixtures.netty(server.target(), Fixtures.channelConfig("buffers",
                Fixtures.service(Fixtures.policy(3, 20, 200, null, Status.Code.UNAVAILABLE), null),
                PER_RPC_LIMIT, CHANNEL_LIMIT), scheduler);
        try (Sampler sampler = new Sampler(client.bufferPool())) {
            // phase 1: every attempt succeeds after a while; buffers are held meanwhile
            server.script(a -> Action.ok().delay(150));
            List<Handle> calls = runConcurrently(client, "ok", CALLS);
            for (Handle h : calls) {
                Status s = h.listener.awaitClose(30, TimeUnit.SECONDS);
                h.listener.assertContract(); // the response is the full request, past the limit too
                assertThat(s.getCode()).as(h.id + ": " + s).isEqualTo(Status.Code.OK);
            }
            long highWaterOk = sampler.max.get();

            // phase 2: every first attempt fails after the whole request arrived
            server.script(a -> a.previousAttempts == null ? Action.failOnHalfClose(Status.Code.UNAVAILABLE).delay(150)
                    : Action.ok());
            long suppressedBefore = client.events().suppressed(SuppressionReason.BUFFER_LIMIT);
            calls = runConcurrently(client, "fail-first", CALLS);
            int ok = 0;
            int committedFailed = 0;
            for (Handle h : calls) {
                Status s = h.listener.awaitClose(30, TimeUnit.SECONDS);
                h.listener.assertContract();
                int attempts = client.attempts().attempts(h.id);
                if (s.isOk()) {
                    ok++;
                    assertThat(attempts).as(h.id + " kept its buffer and was retried").isEqualTo(2);
                } else {
                    committedFailed++;
                    assertThat(s.getCode()).as(h.id).isEqualTo(Status.Code.UNAVAILABLE);
                    assertThat(attempts).as(h.id + " was committed by the limit").isEqualTo(1);
                }
            }
            long suppressedByLimit = client.events().suppressed(SuppressionReason.BUFFER_LIMIT) - suppressedBefore;
            sampler.close();
            assertThat(ok).as("calls that fit were retried").isPositive();
            assertThat(committedFailed).as("calls past the limit were committed").isPositive();
            assertThat(suppressedByLimit).as("each unretried failure is a buffer-limit commit").isEqualTo(committedFailed);
            assertThat(sampler.over.get()).as("samples above the capacity").isZero();
            assertThat(sampler.max.get()).as("high-water mark").isLessThanOrEqualTo(CHANNEL_LIMIT).isPositive();
            Fixtures.waitFor("no timer outstanding", 5000, () -> EngineTestAccess.outstandingTimers(scheduler) == 0);
            assertThat(client.bufferPool().used()).isZero();
            Figures.record("buffer-limit", CALLS + " concurrent client-streaming calls x " + MESSAGES + " x "
                    + MESSAGE_CHARS / 1024 + " KiB, per-RPC limit " + PER_RPC_LIMIT / 1024 + " KiB, channel limit "
                    + CHANNEL_LIMIT / 1024 + " KiB: high-water mark " + sampler.max.get() + " B (" + highWaterOk
                    + " B in the all-OK phase) over " + sampler.samples.get() + " samples, 0 above the limit; all-OK phase "
                    + CALLS + "/" + CALLS + " OK; failing phase " + ok + " retried OK, " + committedFailed
                    + " committed by the limit (suppressed buffer_limit " + suppressedByLimit + "), none failed by the engine");
        } finally {
            client.close();
            server.close();
            scheduler.close();
        }
    }

    private static List<Handle> runConcurrently(Client client, String prefix, int calls) throws InterruptedException {
        List<Handle> handles = java.util.Collections.synchronizedList(new ArrayList<>());
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            String id = prefix + "-" + i;
            Thread t = new Thread(() -> {
                try {
                    go.await();
                    List<String> messages = SimpleCalls.messages(id, MESSAGES, MESSAGE_CHARS);
                    handles.add(SimpleCalls.run(client.channel(), SimpleCalls.CLIENT_STREAMING,
                            CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), id, messages));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            threads.add(t);
            t.start();
        }
        go.countDown();
        for (Thread t : threads) {
            t.join(30_000);
        }
        assertThat(handles).hasSize(calls);
        return new ArrayList<>(handles);
    }

    /**
     * The pool itself, hammered near its capacity: a reservation that does not fit must never be
     * visible, not even for the moment between adding and taking back.
     */
    @Test
    void poolNeverShowsMoreThanItsCapacityWhileRefusing() throws Exception {
        long capacity = 1000;
        RetryBufferPool pool = new RetryBufferPool(capacity);
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            Thread w = new Thread(() -> {
                while (!stop.get()) {
                    if (pool.tryReserve(capacity / 2 + 1)) {
                        pool.release(capacity / 2 + 1);
                    }
                }
            });
            workers.add(w);
            w.start();
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(700);
        long over = 0;
        long samples = 0;
        long max = 0;
        while (System.nanoTime() < deadline) {
            long used = pool.used();
            max = Math.max(max, used);
            if (used > capacity) {
                over++;
            }
            samples++;
        }
        stop.set(true);
        for (Thread w : workers) {
            w.join();
        }
        assertThat(pool.used()).isZero();
        assertThat(over).as("samples above capacity (max seen " + max + ") of " + samples).isZero();
        assertThat(max).isPositive();
    }
}
