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
 */
class DeadlineChainTest {

    private static final long MS = 1_000_000L;
    private Hop a;
    private Hop b;
    private Hop c;
    private ManagedChannel toA;
    private ManagedChannel toB;
    private ManagedChannel toC;

    private void build(DeadlineSettings aToB, DeadlineSettings bToC) throws Exception {
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
            h.deadlines.clear();
            h.handled.set(0);
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

    @Test
    void deadlineTravelsAndShrinksByTheReservePerHop() throws Exception {
        DeadlineSettings reserve100 = DeadlineSettings.NONE.withReserve(Duration.ofMillis(100));
        build(reserve100, reserve100);
        long start = System.nanoTime();
        SimpleServiceGrpc.newBlockingStub(toA).withDeadlineAfter(2000, TimeUnit.MILLISECONDS).unaryRpc(Hop.req("x"));
        long dA = a.deadlines.get(0);
        long dB = b.deadlines.get(0);
        long dC = c.deadlines.get(0);
        // A: the client's 2 s, less transport time
        assertThat((dA - start) / MS).isBetween(1500L, 2050L);
        // B: the reserve earlier than A, give or take the loopback transport time
        assertThat((dA - dB) / MS).isBetween(80L, 400L);
        assertThat((dB - dC) / MS).isBetween(80L, 400L);
        assertThat((dC - start) / MS).as("C: at most the client's timeout minus two reserves").isLessThan(1850L);
        assertThat(dC).isLessThan(dB).isLessThan(dA);
    }

    @Test
    void withoutReserveTheDeadlineTravelsUnchanged() throws Exception {
        build(DeadlineSettings.NONE, DeadlineSettings.NONE);
        SimpleServiceGrpc.newBlockingStub(toA).withDeadlineAfter(2000, TimeUnit.MILLISECONDS).unaryRpc(Hop.req("x"));
        long dA = a.deadlines.get(0);
        long dC = c.deadlines.get(0);
        // nothing taken off: C's deadline is A's, give or take the loopback transport time
        assertThat(Math.abs(dA - dC) / MS).isLessThan(50L);
    }

    @Test
    void aHopWithTooLittleTimeFailsFastAndTheBottomNeverSeesTheCall() throws Exception {
        // client 1000 ms -> A; A->B reserve 100 (B has ~900); B->C reserve 100 (~800 left) under the 850 ms floor
        build(DeadlineSettings.NONE.withReserve(Duration.ofMillis(100)),
                new DeadlineSettings(null, Duration.ofMillis(100), Duration.ofMillis(850)));
        long start = System.nanoTime();
        assertThatThrownBy(() -> SimpleServiceGrpc.newBlockingStub(toA)
                .withDeadlineAfter(1000, TimeUnit.MILLISECONDS).unaryRpc(Hop.req("x")))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
        long elapsedMs = (System.nanoTime() - start) / MS;
        assertThat(elapsedMs).as("the failure comes back at once, not at the deadline").isLessThan(600L);
        assertThat(b.handled.get()).isEqualTo(1);
        assertThat(c.handled.get()).as("C never sees the call").isZero();
    }

    @Test
    void noDeadlineAnywhereStaysWithout() throws Exception {
        build(DeadlineSettings.NONE.withReserve(Duration.ofMillis(100)), DeadlineSettings.NONE);
        SimpleServiceGrpc.newBlockingStub(toA).unaryRpc(Hop.req("x"));
        assertThat(c.deadlines).containsExactly((Long) null);
    }
}
