package io.github.grpcretry.springgrpc;

import static io.github.grpcretry.springgrpc.testing.GrpcClientContext.request;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.fail;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.hang;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.metrics.RetryMeterNames;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.springgrpc.testing.GrpcServerContext;
import io.github.grpcretry.springgrpc.testing.Relay;
import io.github.grpcretry.springgrpc.testing.ScriptedService;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Several Spring Boot 4.1 applications in a chain, each a Spring gRPC server whose service relays to
 * the next over a Spring gRPC channel (Netty on loopback), every hop configured through
 * {@code grpc.retry.*} only: the three-layer amplification (27 attempts at the bottom per request, 3
 * with the guard), deadlines across two hops with a reserve, and a budget's bound.
 */
class LayersContextTest {

    static ScriptedService bottom;
    static GrpcServerContext c;

    @BeforeAll
    static void startBottom() {
        bottom = new ScriptedService((key, n) -> key.startsWith("hang") ? hang() : fail(Status.Code.UNAVAILABLE));
        c = GrpcServerContext.start(bottom);
    }

    @AfterAll
    static void stopBottom() {
        c.close();
    }

    static List<String> retry3(String channel, String target) {
        String m = "grpc.retry.clients." + channel + ".service-config.method[0].retry.";
        return List.of("spring.grpc.client.channel." + channel + ".target=" + target,
                m + "max-attempts=3", m + "initial-backoff=1ms", m + "max-backoff=2ms", m + "backoff-multiplier=2",
                m + "retryable-status-codes=UNAVAILABLE");
    }

    static GrpcServerContext layer(String nextTarget, String... more) {
        List<String> p = new ArrayList<>(retry3("next", nextTarget));
        p.addAll(List.of(more));
        return GrpcServerContext.start(new Object[] {Relay.class}, p.toArray(String[]::new));
    }

    /** Attempts reaching C per request through client → A → B → C, every layer retrying 3 times. */
    static double amplification(boolean guard, String key, int requests) {
        return amplification(guard, key, requests, false);
    }

    static double amplification(boolean guard, String key, int requests, boolean throwing) {
        String g = "grpc.retry.guard.enabled=" + guard;
        String t = "relay.throw=" + throwing;
        try (GrpcServerContext b = layer(c.nettyTarget(), g, t);
                GrpcServerContext a = layer(b.nettyTarget(), g, t)) {
            List<String> p = new ArrayList<>(retry3("entry", a.nettyTarget()));
            p.add(g);
            try (GrpcClientContext client = GrpcClientContext.start(p.toArray(String[]::new))) {
                SimpleServiceGrpc.SimpleServiceBlockingStub entry = client.stub("entry");
                for (int i = 0; i < requests; i++) {
                    StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                            () -> entry.unaryRpc(request(key)));
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                }
                if (guard) {
                    // B's response to each request was marked "do not retry" by its guard, and counted.
                    Counter marked = b.bean(MeterRegistry.class).find(RetryMeterNames.SERVER_GUARD).counter();
                    assertThat(marked).isNotNull();
                    assertThat(marked.count()).isEqualTo(requests);
                }
            }
            return (double) bottom.count(key) / requests;
        }
    }

    @Test
    void threeLayersMultiplyTo27AndTheGuardLeaves3() {
        assertThat(amplification(false, "layers-unguarded", 4)).isEqualTo(27.0);
        assertThat(amplification(true, "layers-guarded", 4)).isEqualTo(3.0);
    }

    @Test
    void guardSeesTheStatusExceptionHandlingMadeOfAnException() {
        // The middle layers let the downstream's StatusRuntimeException escape their handlers: Spring
        // gRPC's exception-handling interceptor closes the call, and the guard, outside it, marks that close.
        assertThat(amplification(true, "layers-guarded-throwing", 2, true)).isEqualTo(3.0);
    }

    @Test
    void deadlinesCrossTwoHopsWithTheReserveTakenOffAtTheMiddle() {
        try (GrpcServerContext a = layer(c.nettyTarget(), "grpc.retry.deadline.reserve=200ms");
                GrpcClientContext client = GrpcClientContext.start(retry3("entry", a.nettyTarget()).toArray(String[]::new))) {
            SimpleServiceGrpc.SimpleServiceBlockingStub entry = client.stub("entry");
            // Warm-up: both channels connected, so the timed call measures deadlines, not connection set-up.
            catchThrowableOfType(StatusRuntimeException.class, () -> entry.unaryRpc(request("warm-up")));
            long start = System.nanoTime();
            StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, () -> entry
                    .withDeadlineAfter(1000, TimeUnit.MILLISECONDS).unaryRpc(request("hang-hops")));
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
            // C saw the caller's deadline less A's reserve: at most 800 ms left.
            List<ScriptedService.Arrival> arrivals = bottom.arrivals("hang-hops");
            assertThat(arrivals).hasSize(1);
            assertThat(arrivals.get(0).deadlineRemainingMillis()).isBetween(500L, 800L);
            // A gave up first and answered DEADLINE_EXCEEDED before the caller's own deadline.
            assertThat(took).isBetween(700L, 980L);
        }
    }

    @Test
    void aBudgetBoundsRetriesToItsShareOfCalls() {
        List<String> p = new ArrayList<>(retry3("budgeted", c.nettyTarget()));
        p.add("grpc.retry.clients.budgeted.budget.ratio=0.1");
        p.add("grpc.retry.clients.budgeted.budget.min-retries-per-second=0");
        try (GrpcClientContext client = GrpcClientContext.start(p.toArray(String[]::new))) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = client.stub("budgeted");
            int calls = 100;
            for (int i = 0; i < calls; i++) {
                catchThrowableOfType(StatusRuntimeException.class, () -> stub.unaryRpc(request("budget")));
            }
            int arrivals = bottom.count("budget");
            // Unlimited would be 300; the budget allows ratio × calls = 10 retries.
            assertThat(arrivals).isGreaterThan(calls).isLessThanOrEqualTo(calls + 10);
            MeterRegistry registry = client.bean(MeterRegistry.class);
            assertThat(registry.find(RetryMeterNames.SUPPRESSED).tag("client", "budgeted").tag("reason", "budget")
                    .counter().count()).isEqualTo(calls);
            // gRFC A66's attributes of the A96 meters: the generated method, the target as grpc-java canonicalized it
            DistributionSummary retries = registry.get(RetryMeterNames.CALL_RETRIES).summary();
            assertThat(retries.getId().getTag("grpc.method")).isEqualTo("grpc.testing.SimpleService/UnaryRpc");
            assertThat(retries.getId().getTag("grpc.target"))
                    .isEqualTo("dns:///" + c.nettyTarget().substring("static://".length()));
            assertThat(retries.count()).isEqualTo(arrivals - calls);
        }
    }
}
