package io.github.grpcretry.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.sample.proto.FlakyGrpc;
import io.github.grpcretry.sample.proto.FlakyReply;
import io.github.grpcretry.sample.proto.FlakyRequest;
import io.github.grpcretry.sample.server.FlakyServer;
import io.github.grpcretry.sample.server.QueueingBackend;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The sample backend's queue mode: a fixed number of workers with a fixed service time behind a FIFO
 * queue, completions on timers, stalls, a bound, a reset, and the switch that drops calls whose
 * deadline passed while they waited. Timing checks are lower bounds only (a timer never fires early);
 * everything else waits for the jobs' own completions.
 */
class QueueingBackendTest {

    private static final long TIMEOUT_S = 30;

    /** A job that records how it ended and when. */
    static final class Probe implements QueueingBackend.Job {
        final int id;
        final Deadline deadline;
        final List<Integer> completions;
        final CountDownLatch done;
        volatile long endedAt;
        volatile Status abandoned;

        Probe(int id, Deadline deadline, List<Integer> completions, CountDownLatch done) {
            this.id = id;
            this.deadline = deadline;
            this.completions = completions;
            this.done = done;
        }

        @Override
        public Deadline deadline() {
            return deadline;
        }

        @Override
        public boolean cancelled() {
            return false;
        }

        @Override
        public void complete() {
            endedAt = System.nanoTime();
            completions.add(id);
            done.countDown();
        }

        @Override
        public void abandon(Status status) {
            endedAt = System.nanoTime();
            abandoned = status;
            done.countDown();
        }
    }

    private static QueueingBackend backend(int workers, int serviceMs, int limit, boolean drop) {
        return new QueueingBackend(new QueueingBackend.Settings(workers, Duration.ofMillis(serviceMs), limit, drop));
    }

    @Test
    void workersServeInArrivalOrderAtTheirCapacity() throws Exception {
        try (QueueingBackend b = backend(4, 20, 1000, false)) {
            assertThat(b.capacityPerSecond()).isEqualTo(200.0);
            List<Integer> order = Collections.synchronizedList(new ArrayList<>());
            CountDownLatch done = new CountDownLatch(40);
            long start = System.nanoTime();
            for (int i = 0; i < 40; i++) {
                assertThat(b.submit(new Probe(i, null, order, done))).isNull();
            }
            long submitted = System.nanoTime() - start;
            assertThat(done.await(TIMEOUT_S, TimeUnit.SECONDS)).isTrue();
            // 40 calls on 4 workers of 20 ms: ten rounds, so at least 200 ms (a timer never fires early)
            assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(200));
            // FIFO: the workers take calls in arrival order, four at a time, each round 20 ms after the one
            // before; calls submitted microseconds apart may end in any order within their round
            for (int round = 0; round < 10; round++) {
                assertThat(order.subList(4 * round, 4 * round + 4)).as("round " + round)
                        .containsExactlyInAnyOrder(4 * round, 4 * round + 1, 4 * round + 2, 4 * round + 3);
            }
            QueueingBackend.Snapshot s = b.snapshot();
            assertThat(s.arrivals()).isEqualTo(40);
            assertThat(s.served()).isEqualTo(40);
            assertThat(s.wasted()).isZero();
            if (submitted < TimeUnit.MILLISECONDS.toNanos(20)) {
                // all submitted within one service time (not guaranteed on a loaded machine, so only then):
                // 36 waited behind the first four
                assertThat(s.maxQueueLength()).isGreaterThanOrEqualTo(36);
            }
            assertThat(s.queueLength()).isZero();
        }
    }

    @Test
    void aStallStartsNothingUntilItEndsThenTheQueueDrains() throws Exception {
        try (QueueingBackend b = backend(2, 10, 1000, false)) {
            List<Integer> order = Collections.synchronizedList(new ArrayList<>());
            CountDownLatch done = new CountDownLatch(6);
            long stallEnd = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
            b.stallBetween(System.nanoTime(), stallEnd);
            assertThat(b.stalled()).isTrue();
            List<Probe> probes = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                Probe p = new Probe(i, null, order, done);
                probes.add(p);
                b.submit(p);
            }
            assertThat(done.await(TIMEOUT_S, TimeUnit.SECONDS)).isTrue();
            for (Probe p : probes) {
                // nothing starts inside the stall: the first two end a service time after it at the earliest
                assertThat(p.endedAt - stallEnd).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(10));
            }
            // two workers start together at the stall's end, so each pair may end in either order; pairs in order
            assertThat(order.subList(0, 2)).containsExactlyInAnyOrder(0, 1);
            assertThat(order.subList(2, 4)).containsExactlyInAnyOrder(2, 3);
            assertThat(order.subList(4, 6)).containsExactlyInAnyOrder(4, 5);
            assertThat(b.stalled()).isFalse();
        }
    }

    @Test
    void expiredCallsAreDroppedOnlyWhenTheSwitchIsOn() throws Exception {
        for (boolean drop : new boolean[] {true, false}) {
            try (QueueingBackend b = backend(1, 10, 1000, drop)) {
                List<Integer> order = Collections.synchronizedList(new ArrayList<>());
                CountDownLatch done = new CountDownLatch(2);
                b.stall(Duration.ofMillis(300));
                Probe expiring = new Probe(0, Deadline.after(100, TimeUnit.MILLISECONDS), order, done);
                Probe patient = new Probe(1, Deadline.after(30, TimeUnit.SECONDS), order, done);
                b.submit(expiring);
                b.submit(patient);
                assertThat(done.await(TIMEOUT_S, TimeUnit.SECONDS)).isTrue();
                QueueingBackend.Snapshot s = b.snapshot();
                assertThat(patient.abandoned).isNull();
                assertThat(expiring.abandoned.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
                if (drop) {
                    assertThat(order).containsExactly(1);
                    assertThat(s.dropped()).isEqualTo(1);
                    assertThat(s.served()).isEqualTo(1);
                    assertThat(s.wasted()).isZero();
                } else {
                    // served anyway, after its caller's deadline: wasted work
                    assertThat(order).containsExactly(1);
                    assertThat(s.dropped()).isZero();
                    assertThat(s.served()).isEqualTo(2);
                    assertThat(s.wasted()).isEqualTo(1);
                }
            }
        }
    }

    @Test
    void theQueueIsBoundedAndAResetAbandonsWhatWaitsAndEndsTheStall() throws Exception {
        try (QueueingBackend b = backend(1, 10, 5, false)) {
            List<Integer> order = Collections.synchronizedList(new ArrayList<>());
            CountDownLatch abandoned = new CountDownLatch(5);
            b.stall(Duration.ofSeconds(60));
            List<Probe> queued = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                Probe p = new Probe(i, null, order, abandoned);
                queued.add(p);
                assertThat(b.submit(p)).isNull();
            }
            Status full = b.submit(new Probe(99, null, order, new CountDownLatch(1)));
            assertThat(full.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(b.queueLength()).isEqualTo(5);

            b.reset(Status.ABORTED.withDescription("reset"));
            assertThat(abandoned.await(TIMEOUT_S, TimeUnit.SECONDS)).isTrue();
            assertThat(queued).allSatisfy(p -> assertThat(p.abandoned.getCode()).isEqualTo(Status.Code.ABORTED));
            assertThat(b.queueLength()).isZero();
            assertThat(b.stalled()).isFalse();

            // the stall ended with the reset: a new call is served well before the 60 s stall would have ended
            CountDownLatch served = new CountDownLatch(1);
            b.submit(new Probe(7, null, order, served));
            assertThat(served.await(TIMEOUT_S, TimeUnit.SECONDS)).isTrue();
            assertThat(order).containsExactly(7);
            assertThat(b.snapshot().rejected()).isEqualTo(1);
        }
    }

    /**
     * Over gRPC: the deadline a worker checks is the call's gRPC Context deadline, which the client's
     * deadline set (the transport carries it in). One worker, a stall: a call whose deadline passes
     * while it waits is dropped with the switch on and served as wasted work without it; the call
     * behind it is served either way. The margins are wide (a 700 ms deadline against a 2 s stall) so
     * that the short call reaches the server before its deadline even on a loaded machine.
     */
    @Test
    void overGrpcTheWorkerChecksTheDeadlineTheClientSent() throws Exception {
        for (boolean drop : new boolean[] {true, false}) {
            try (QueueingBackend b = backend(1, 20, 100, drop);
                 FlakyServer server = FlakyServer.startQueueing(42, b)) {
                String name = server.address().substring("in-process:".length());
                ManagedChannel channel = InProcessChannelBuilder.forName(name).build();
                try {
                    FlakyGrpc.FlakyStub stub = FlakyGrpc.newStub(channel);
                    // connect first (not under a deadline), so the short call's time goes to the queue
                    FlakyGrpc.newBlockingStub(channel).call(FlakyRequest.newBuilder().setKey("warm-up").build());
                    Map<String, Status> results = new ConcurrentHashMap<>();
                    CountDownLatch done = new CountDownLatch(2);
                    b.stall(Duration.ofSeconds(2));
                    call(stub.withDeadlineAfter(700, TimeUnit.MILLISECONDS), "short", results, done);
                    call(stub.withDeadlineAfter(20, TimeUnit.SECONDS), "long", results, done);
                    assertThat(done.await(TIMEOUT_S, TimeUnit.SECONDS)).isTrue();
                    assertThat(results.get("short").getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
                    assertThat(results.get("long").getCode()).isEqualTo(Status.Code.OK);
                    // FIFO: "short" was taken (dropped or served) before "long" started, so its count is final
                    QueueingBackend.Snapshot s = b.snapshot();
                    assertThat(s.arrivals()).isEqualTo(3);
                    assertThat(server.arrivals().total()).isEqualTo(3);
                    if (drop) {
                        assertThat(s.dropped()).isEqualTo(1);
                        assertThat(s.served()).isEqualTo(2);
                        assertThat(s.wasted()).isZero();
                    } else {
                        assertThat(s.dropped()).isZero();
                        assertThat(s.served()).isEqualTo(3);
                        assertThat(s.wasted()).isEqualTo(1);
                    }
                } finally {
                    channel.shutdownNow();
                }
            }
        }
    }

    private static void call(FlakyGrpc.FlakyStub stub, String key, Map<String, Status> results, CountDownLatch done) {
        stub.call(FlakyRequest.newBuilder().setKey(key).build(), new io.grpc.stub.StreamObserver<>() {
            @Override
            public void onNext(FlakyReply value) {
            }

            @Override
            public void onError(Throwable t) {
                results.put(key, Status.fromThrowable(t));
                done.countDown();
            }

            @Override
            public void onCompleted() {
                results.put(key, Status.OK);
                done.countDown();
            }
        });
    }
}
