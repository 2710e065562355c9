package io.github.grpcretry.deadline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A real chain of gRPC services over Netty loopback, client -> A -> B -> C, each hop with the
 * deadline interceptor: the deadline travels, shrinks by the reserve at every hop, and a hop with too
 * little time left fails fast instead of calling on.
 *
 * <p>The wire carries the time left when a call starts ({@code grpc-timeout}) and the receiver counts
 * it from the moment the stream arrives, so each hop's deadline is the caller's (less the reserve)
 * plus the transport time, never less. Each hop reads its time remaining between two clock readings
 * ({@link Hop.Reading}); the checks below follow from that with no allowance for load: a hop's time
 * remaining is at most the caller's less the reserve (exact but for the header's sub-microsecond
 * rounding, {@link #WIRE_ROUNDING}), and at least that less the time that passed between the two
 * hops' readings.
 */
class DeadlineChainTest {

    private static final long MS = 1_000_000L;
    /** grpc-timeout carries at most 8 digits of a unit, so a deadline under 100 s loses under 1 µs; 1 ms covers it. */
    private static final long WIRE_ROUNDING = MS;
    private Hop a;
    private Hop b;
    private Hop c;
    private ManagedChannel toA;
    private ManagedChannel toB;
    private ManagedChannel toC;

    private void build(DeadlineClientInterceptor.Settings aToB, DeadlineClientInterceptor.Settings bToC) throws Exception {
        DeadlineServerInterceptor server = new DeadlineServerInterceptor();
        c = new Hop("C", server);
        b = new Hop("B", server);
        a = new Hop("A", server);
        toC = c.channel(new DeadlineClientInterceptor("c", bToC));
        toB = b.channel(new DeadlineClientInterceptor("b", aToB));
        toA = a.channel();
        var cStub = SimpleServiceGrpc.newBlockingStub(toC);
        var bStub = SimpleServiceGrpc.newBlockingStub(toB);
        b.body(r -> cStub.unaryRpc(r));
        a.body(r -> bStub.unaryRpc(r));
        // warm up: connections established and classes loaded, as in a running system; the wire carries
        // the time left when a call starts, so a first call that waits for a connection arrives late
        SimpleServiceGrpc.newBlockingStub(toA).unaryRpc(Hop.req("warm-up"));
        for (Hop h : new Hop[] {a, b, c}) {
            h.clear();
        }
    }

    @AfterEach
    void close() throws Exception {
        for (ManagedChannel ch : new ManagedChannel[] {toA, toB, toC}) {
            if (ch != null) {
                ch.shutdownNow();
            }
        }
        for (Hop h : new Hop[] {a, b, c}) {
            if (h != null) {
                h.close();
            }
        }
    }

    /**
     * Asserts that {@code callee}'s deadline is {@code caller}'s less {@code reserveNanos}: its time
     * remaining at most the caller's less the reserve, at least that less the time between the readings.
     */
    private static void assertHandedOn(Hop.Reading caller, Hop.Reading callee, long reserveNanos, String what) {
        long rCaller = caller.remainingNanos();
        long rCallee = callee.remainingNanos();
        long between = callee.after() - caller.before();
        assertThat(rCallee).as("%s: time remaining (ns) against the caller's %d less %d, %d ns between the readings",
                        what, rCaller, reserveNanos, between)
                .isLessThanOrEqualTo(rCaller - reserveNanos + WIRE_ROUNDING)
                .isGreaterThanOrEqualTo(rCaller - reserveNanos - between - WIRE_ROUNDING);
    }

    @Test
    void deadlineTravelsAndShrinksByTheReservePerHop() throws Exception {
        DeadlineClientInterceptor.Settings reserve100 = DeadlineClientInterceptor.Settings.NONE.withReserve(Duration.ofMillis(100));
        build(reserve100, reserve100);
        long timeout = 10_000 * MS;
        long start = System.nanoTime();
        SimpleServiceGrpc.newBlockingStub(toA).withDeadlineAfter(timeout, TimeUnit.NANOSECONDS).unaryRpc(Hop.req("x"));
        Hop.Reading rA = a.readings.get(0);
        Hop.Reading rB = b.readings.get(0);
        Hop.Reading rC = c.readings.get(0);
        // A: the client's timeout (no reserve between the client and A), less the time since the stub set it
        assertHandedOn(new Hop.Reading(start, timeout, start), rA, 0, "A");
        // B and C: the reserve taken off at every hop
        assertHandedOn(rA, rB, 100 * MS, "B");
        assertHandedOn(rB, rC, 100 * MS, "C");
        assertThat(rC.remainingNanos()).as("C: at most the client's timeout minus two reserves")
                .isLessThanOrEqualTo(timeout - 200 * MS + 3 * WIRE_ROUNDING);
        assertThat(rC.remainingNanos()).isLessThan(rB.remainingNanos()).isLessThan(rA.remainingNanos());
    }

    @Test
    void withoutReserveTheDeadlineTravelsUnchanged() throws Exception {
        build(DeadlineClientInterceptor.Settings.NONE, DeadlineClientInterceptor.Settings.NONE);
        SimpleServiceGrpc.newBlockingStub(toA).withDeadlineAfter(10_000, TimeUnit.MILLISECONDS).unaryRpc(Hop.req("x"));
        Hop.Reading rA = a.readings.get(0);
        Hop.Reading rB = b.readings.get(0);
        Hop.Reading rC = c.readings.get(0);
        // nothing taken off at either hop
        assertHandedOn(rA, rB, 0, "B");
        assertHandedOn(rB, rC, 0, "C");
        // in absolute terms: C's deadline is A's plus the transport time, never earlier (each absolute
        // deadline lies between its reading's before + remaining and after + remaining)
        long earliestA = rA.before() + rA.remainingNanos();
        long latestA = rA.after() + rA.remainingNanos();
        long earliestC = rC.before() + rC.remainingNanos();
        long latestC = rC.after() + rC.remainingNanos();
        assertThat(latestC).as("C's deadline is not earlier than A's").isGreaterThanOrEqualTo(earliestA - 2 * WIRE_ROUNDING);
        assertThat(earliestC - latestA).as("C's deadline later than A's by at most the time between their readings")
                .isLessThanOrEqualTo(rC.after() - rA.before() + 2 * WIRE_ROUNDING);
    }

    @Test
    void aHopWithTooLittleTimeFailsFastAndTheBottomNeverSeesTheCall() throws Exception {
        // client 10 s -> A; A->B reserve 1 s (B has under 9 s); B->C reserve 1 s (under 8 s left), under the
        // 8.5 s floor: B fails the call without sending it, however long the hops took
        build(DeadlineClientInterceptor.Settings.NONE.withReserve(Duration.ofSeconds(1)),
                new DeadlineClientInterceptor.Settings(null, Duration.ofSeconds(1), Duration.ofMillis(8_500)));
        long start = System.nanoTime();
        assertThatThrownBy(() -> SimpleServiceGrpc.newBlockingStub(toA)
                .withDeadlineAfter(10_000, TimeUnit.MILLISECONDS).unaryRpc(Hop.req("x")))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
        long elapsedMs = (System.nanoTime() - start) / MS;
        assertThat(elapsedMs).as("the failure comes back at once, not at the 10 s deadline").isLessThan(9_000L);
        assertThat(b.handled.get()).isEqualTo(1);
        assertThat(c.handled.get()).as("C never sees the call").isZero();
    }

    @Test
    void noDeadlineAnywhereStaysWithout() throws Exception {
        build(DeadlineClientInterceptor.Settings.NONE.withReserve(Duration.ofMillis(100)), DeadlineClientInterceptor.Settings.NONE);
        SimpleServiceGrpc.newBlockingStub(toA).unaryRpc(Hop.req("x"));
        assertThat(c.deadlines).containsExactly((Long) null);
    }
}
