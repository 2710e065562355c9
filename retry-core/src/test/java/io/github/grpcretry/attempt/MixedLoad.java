package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

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

/**
 * The load of the concurrency tests and their end-of-run check, written once: many threads on one
 * channel of the interceptor engine, each making calls over the four RPC types with seeded random
 * messages (some of 20 KiB), cancellations at random moments (before or after the half-close) and short
 * deadlines; the callbacks run on a {@link CallbackExecutor} so the check can tell when none is left.
 */
final class MixedLoad {

    final Map<Status.Code, Integer> codes = new EnumMap<>(Status.Code.class);
    final ConcurrentLinkedQueue<ContractListener<SimpleResponse>> listeners = new ConcurrentLinkedQueue<>();
    private final int calls;

    private MixedLoad(int calls) {
        this.calls = calls;
    }

    /**
     * Runs {@code threads} x {@code callsPerThread} calls on {@code client} and waits for all of them to
     * close. Thread {@code t} draws from {@code new Random(seedBase + t)}. With {@code pauseBetweenMessages}
     * a call sometimes pauses between its messages (so hedges start while messages still come) and asks
     * {@code isReady()} after each.
     */
    static MixedLoad run(Engines.Client client, CallbackExecutor callbacks, int threads, int callsPerThread,
            long seedBase, boolean pauseBetweenMessages) throws InterruptedException {
        MixedLoad load = new MixedLoad(threads * callsPerThread);
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch done = new CountDownLatch(threads);
        List<MethodDescriptor<SimpleRequest, SimpleResponse>> methods =
                List.of(Rpc.UNARY, Rpc.CLIENT_STREAMING, Rpc.SERVER_STREAMING, Rpc.BIDI);
        try {
            for (int t = 0; t < threads; t++) {
                long seed = seedBase + t;
                pool.execute(() -> {
                    Random random = new Random(seed);
                    try {
                        for (int i = 0; i < callsPerThread; i++) {
                            load.call(client, callbacks, methods.get(random.nextInt(4)), random, pauseBetweenMessages);
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
            return load;
        } finally {
            pool.shutdownNow();
        }
    }

    private void call(Engines.Client client, CallbackExecutor callbacks, MethodDescriptor<SimpleRequest, SimpleResponse> m,
            Random random, boolean pauseBetweenMessages) throws InterruptedException {
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
            if (pauseBetweenMessages) {
                if (random.nextInt(4) == 0) {
                    Thread.sleep(random.nextInt(8)); // hedges start while messages still come (the scenario)
                }
                h.call.isReady();
            }
        }
        if (mode == 1) {
            Thread.sleep(random.nextInt(15)); // a random moment to cancel at (the scenario), not a wait for anything
            h.call.cancel("random cancel", null);
        } else {
            h.halfClose();
            if (mode == 2) {
                Thread.sleep(random.nextInt(15)); // a random moment to cancel at (the scenario)
                h.call.cancel("cancel after half-close", null);
            }
        }
        Status s = h.listener.awaitClose(20, TimeUnit.SECONDS);
        synchronized (codes) {
            codes.merge(s.getCode(), 1, Integer::sum);
        }
    }

    /**
     * Waits until nothing is live in the engine (no timer, every attempt ended) and no callback is queued
     * or running (a late second close would have been delivered by then), then checks: every listener
     * closed exactly once with the call contract kept, no buffered byte held, every call and every attempt
     * reported ended.
     */
    void assertNothingLeft(RetryScheduler scheduler, Engines.Client client, CallbackExecutor callbacks)
            throws InterruptedException {
        RetryEngineTest.waitFor(() -> scheduler.outstandingTimers() == 0);
        RetryEngineTest.waitFor(() -> client.events().attemptsEnded.get() == client.events().attemptsStarted.get());
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
        assertThat(listeners).hasSize(calls);
        assertThat(EngineTestAccess.bufferPool(client.interceptor()).used()).as("bytes held").isZero();
        assertThat(client.events().callsEnded.get()).isEqualTo(client.events().callsStarted.get()).isEqualTo(calls);
        assertThat(client.events().attemptsEnded.get()).isEqualTo(client.events().attemptsStarted.get());
    }
}
