package io.github.grpcretry.deadline;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.context.ContextRegistry;
import io.micrometer.context.ContextSnapshot;
import io.micrometer.context.ContextSnapshotFactory;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The gRPC Context crosses threads: B's handler hands the downstream call to C to another thread;
 * C records the deadline it sees. Each case has its negative control (without the wrapper the
 * deadline is lost), so the wrapper is what carries it.
 */
class GrpcContextPropagationTest {

    private static final long MS = 1_000_000L;
    private static ExecutorService pool;
    private static ScheduledExecutorService scheduler;
    private Hop b;
    private Hop c;
    private ManagedChannel toB;
    private ManagedChannel toC;
    private SimpleServiceGrpc.SimpleServiceBlockingStub cStub;

    @BeforeAll
    static void pools() {
        pool = Executors.newFixedThreadPool(2);
        scheduler = Executors.newSingleThreadScheduledExecutor();
    }

    @AfterAll
    static void stopPools() {
        pool.shutdownNow();
        scheduler.shutdownNow();
    }

    @BeforeEach
    void chain() throws Exception {
        c = new Hop("C");
        b = new Hop("B");
        toC = c.channel();
        toB = b.channel();
        cStub = SimpleServiceGrpc.newBlockingStub(toC);
        cStub.unaryRpc(Hop.req("warm-up"));
        c.clear();
    }

    @AfterEach
    void close() throws Exception {
        toB.shutdownNow();
        toC.shutdownNow();
        b.close();
        c.close();
    }

    /**
     * Calls B with a 2 s deadline; returns B's and C's readings of their deadlines (C's time remaining
     * is null when the deadline was lost).
     */
    private Hop.Reading[] callThroughB(Hop.Body bBody) {
        b.body(bBody);
        SimpleServiceGrpc.newBlockingStub(toB).withDeadlineAfter(2000, TimeUnit.MILLISECONDS).unaryRpc(Hop.req("x"));
        return new Hop.Reading[] {b.readings.get(0), c.readings.get(0)};
    }

    /**
     * C's deadline is B's: its time remaining is at most B's (1 ms for grpc-timeout's rounding: the wire
     * only adds the transport time) and at least B's less the time between their readings. Exact.
     */
    private static void assertCarried(Hop.Reading[] bc) {
        Hop.Reading rb = bc[0];
        Hop.Reading rc = bc[1];
        assertThat(rc.remainingNanos()).as("C's deadline").isNotNull();
        long between = rc.after() - rb.before();
        assertThat(rc.remainingNanos()).as("C's time remaining against B's %d ns, %d ns between the readings",
                        rb.remainingNanos(), between)
                .isBetween(rb.remainingNanos() - between - MS, rb.remainingNanos() + MS);
    }

    private static boolean lost(Hop.Reading[] bc) {
        return bc[1].remainingNanos() == null;
    }

    @Test
    void wrappedExecutorCarriesTheDeadline() {
        Executor wrapped = GrpcContextPropagation.wrap((Executor) command -> pool.execute(command));
        assertCarried(callThroughB(r -> {
            CompletableFuture<SimpleResponse> f = new CompletableFuture<>();
            wrapped.execute(() -> f.complete(cStub.unaryRpc(r)));
            return f.get(5, TimeUnit.SECONDS);
        }));
    }

    @Test
    void plainExecutorLosesTheDeadline() {
        Executor plain = command -> pool.execute(command);
        assertThat(lost(callThroughB(r -> {
            CompletableFuture<SimpleResponse> f = new CompletableFuture<>();
            plain.execute(() -> f.complete(cStub.unaryRpc(r)));
            return f.get(5, TimeUnit.SECONDS);
        }))).isTrue();
    }

    @Test
    void supplyAsyncOnAWrappedExecutorServiceCarriesTheDeadline() {
        ExecutorService wrapped = GrpcContextPropagation.wrap(pool);
        assertCarried(callThroughB(r -> CompletableFuture.supplyAsync(() -> cStub.unaryRpc(r), wrapped)
                .get(5, TimeUnit.SECONDS)));

        c.clear();
        b.clear();
        assertThat(lost(callThroughB(r -> CompletableFuture.supplyAsync(() -> cStub.unaryRpc(r), pool)
                .get(5, TimeUnit.SECONDS)))).as("control: the same pool unwrapped").isTrue();
    }

    @Test
    void submitAndInvokeAllOnAWrappedExecutorServiceCarryTheDeadline() {
        ExecutorService wrapped = GrpcContextPropagation.wrap(pool);
        b.body(r -> {
            wrapped.submit(() -> cStub.unaryRpc(r)).get(5, TimeUnit.SECONDS);
            Callable<SimpleResponse> task = () -> cStub.unaryRpc(r);
            for (var f : wrapped.invokeAll(List.of(task, task))) {
                f.get();
            }
            return Hop.resp("ok");
        });
        SimpleServiceGrpc.newBlockingStub(toB).withDeadlineAfter(2000, TimeUnit.MILLISECONDS).unaryRpc(Hop.req("x"));
        assertThat(c.deadlines).hasSize(3).doesNotContainNull();
    }

    @Test
    void wrappedSupplierCarriesTheDeadline() {
        assertCarried(callThroughB(r -> CompletableFuture
                .supplyAsync(GrpcContextPropagation.wrapSupplier(() -> cStub.unaryRpc(r)), pool).get(5, TimeUnit.SECONDS)));
    }

    @Test
    void cancellationOfTheInboundCallIsSeenOnAnotherThread() throws Exception {
        CompletableFuture<Boolean> wrappedSaw = new CompletableFuture<>();
        CompletableFuture<Boolean> plainSaw = new CompletableFuture<>();
        CompletableFuture<Void> started = new CompletableFuture<>();
        java.util.concurrent.CountDownLatch seenByWrapped = new java.util.concurrent.CountDownLatch(1);
        ExecutorService wrapped = GrpcContextPropagation.wrap(pool);
        b.body(r -> {
            wrapped.execute(() -> wrappedSaw.complete(waitForCancellation(30_000)));
            // the control looks once, after the wrapped work has seen the inbound call cancelled
            new Thread(() -> {
                try {
                    plainSaw.complete(seenByWrapped.await(30, TimeUnit.SECONDS) && Context.current().isCancelled());
                } catch (InterruptedException e) {
                    plainSaw.completeExceptionally(e);
                }
            }).start();
            started.complete(null);
            wrappedSaw.get(35, TimeUnit.SECONDS);
            return Hop.resp("ok");
        });
        Context.CancellableContext caller = Context.current().withCancellation();
        caller.run(() -> SimpleServiceGrpc.newStub(toB).unaryRpc(Hop.req("x"), new NoopObserver()));
        started.get(5, TimeUnit.SECONDS);
        caller.cancel(null);
        assertThat(wrappedSaw.get(35, TimeUnit.SECONDS)).as("wrapped work sees the cancellation").isTrue();
        seenByWrapped.countDown();
        assertThat(plainSaw.get(35, TimeUnit.SECONDS)).as("control: a plain thread does not").isFalse();
    }

    private static boolean waitForCancellation(long ms) {
        long until = System.nanoTime() + ms * MS;
        while (System.nanoTime() < until) {
            if (Context.current().isCancelled()) {
                return true;
            }
            try {
                Thread.sleep(5); // polls for the cancellation (the event), not a synchronisation point
            } catch (InterruptedException e) {
                return false;
            }
        }
        return false;
    }

    @Test
    void threadLocalAccessorCarriesTheContextThroughASnapshot() throws Exception {
        ContextRegistry registry = new ContextRegistry().registerThreadLocalAccessor(
                GrpcContextPropagation.threadLocalAccessor());
        ContextSnapshotFactory factory = ContextSnapshotFactory.builder().contextRegistry(registry).build();
        long before = System.nanoTime();
        Context.CancellableContext ctx = Context.current().withDeadlineAfter(1500, TimeUnit.MILLISECONDS, scheduler);
        ContextSnapshot snapshot = ctx.call(factory::captureAll);
        Optional<Duration> seen = pool.submit(snapshot.wrap(() -> Deadlines.remaining())).get();
        long took = System.nanoTime() - before;
        Context afterwards = pool.submit(Context::current).get();
        ctx.cancel(null);
        assertThat(seen).isPresent();
        // the context's deadline, read on the worker: at most 1500 ms left, less at most the time it took
        assertThat(seen.get().toNanos()).isBetween(1500 * MS - took, 1500 * MS);
        assertThat(afterwards).as("restored on the worker after the task").isSameAs(Context.ROOT);

        // nothing captured outside a gRPC context: the worker keeps the root context
        ContextSnapshot empty = factory.captureAll();
        assertThat(pool.submit(empty.wrap(() -> Context.current())).get()).isSameAs(Context.ROOT);
    }

    @Test
    void reactorAutomaticContextPropagationCarriesTheDeadline() throws Exception {
        ContextRegistry.getInstance().registerThreadLocalAccessor(GrpcContextPropagation.threadLocalAccessor());
        Hooks.enableAutomaticContextPropagation();
        try {
            Hop.Reading[] gap = callThroughB(r -> Mono.fromCallable(() -> cStub.unaryRpc(r))
                    .subscribeOn(Schedulers.boundedElastic())
                    .block(Duration.ofSeconds(5)));
            assertCarried(gap);

            // after a hop onto the parallel scheduler too
            c.clear();
            b.clear();
            Hop.Reading[] afterDelay = callThroughB(r -> Mono.delay(Duration.ofMillis(20))
                    .publishOn(Schedulers.boundedElastic())
                    .map(x -> cStub.unaryRpc(r))
                    .block(Duration.ofSeconds(5)));
            assertCarried(afterDelay);

            // control: without the accessor Reactor has nothing to carry. On threads of its own: a pooled
            // thread that ran a task while the accessor was registered may still hold a gRPC Context that
            // Reactor attached there (and, once the accessor is gone, no longer resets), and that context
            // (B's earlier call, cancelled when it ended) would cancel the control's call
            ContextRegistry.getInstance().removeThreadLocalAccessor(GrpcContextPropagation.THREAD_LOCAL_KEY);
            c.clear();
            b.clear();
            reactor.core.scheduler.Scheduler fresh = Schedulers.newBoundedElastic(2, 16, "propagation-control");
            try {
                Hop.Reading[] lost = callThroughB(r -> Mono.fromCallable(() -> cStub.unaryRpc(r))
                        .subscribeOn(fresh)
                        .block(Duration.ofSeconds(5)));
                assertThat(lost(lost)).isTrue();
            } finally {
                fresh.dispose();
            }
        } finally {
            Hooks.disableAutomaticContextPropagation();
            ContextRegistry.getInstance().registerThreadLocalAccessor(GrpcContextPropagation.threadLocalAccessor());
        }
    }

    @Test
    void deadlinesReportTimeLeft() throws Exception {
        assertThat(Deadlines.remaining()).isEmpty();
        assertThat(Deadlines.hasAtLeast(Duration.ofDays(1))).isTrue();
        long before = System.nanoTime();
        Context.CancellableContext ctx = Context.current().withDeadlineAfter(10, TimeUnit.SECONDS, scheduler);
        ctx.run(() -> {
            Optional<Duration> left = Deadlines.remaining();
            long took = System.nanoTime() - before;
            // at most the 10 s, less at most the time since the context was made
            assertThat(left).get().satisfies(d -> assertThat(d.toNanos()).isBetween(10_000 * MS - took, 10_000 * MS));
            assertThat(Deadlines.hasAtLeast(Duration.ofSeconds(5))).as("half the time left, 5 s of margin").isTrue();
            assertThat(Deadlines.hasAtLeast(Duration.ofSeconds(11))).isFalse();
        });
        ctx.cancel(null);
        ctx.run(() -> assertThat(Deadlines.hasAtLeast(Duration.ZERO)).as("cancelled").isFalse());
        Context.CancellableContext past = Context.current().withDeadlineAfter(-5, TimeUnit.MILLISECONDS, scheduler);
        assertThat(Deadlines.remaining(past)).contains(Duration.ZERO);
    }

    static final class NoopObserver implements StreamObserver<SimpleResponse> {
        @Override
        public void onNext(SimpleResponse value) {
        }

        @Override
        public void onError(Throwable t) {
        }

        @Override
        public void onCompleted() {
        }
    }
}
