package io.github.grpcretry.springgrpc;

import static io.github.grpcretry.springgrpc.testing.GrpcClientContext.request;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.delayedOk;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.fail;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.ok;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.springgrpc.testing.GrpcServerContext;
import io.github.grpcretry.springgrpc.testing.ScriptedService;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The R1 (retryPolicy) and R2 (retryThrottling) rows of the lab on Spring Boot 4.1: a real Spring gRPC
 * server application (Netty on loopback), a client application whose channels are configured only
 * through {@code grpc.retry.*} properties and built by Spring gRPC's channel factory.
 */
class RetryTablesContextTest {

    static ScriptedService service;
    static GrpcServerContext server;
    static GrpcClientContext client;

    /** The script: the scenario key's prefix says what the server does with the n-th arrival. */
    static ScriptedService.Action script(String key, int n) {
        if (key.startsWith("first2")) {
            return n < 2 ? fail(Status.Code.UNAVAILABLE) : ok();
        }
        if (key.startsWith("internal")) {
            return fail(Status.Code.INTERNAL);
        }
        if (key.startsWith("pushback300")) {
            return n == 0 ? fail(Status.Code.UNAVAILABLE, "300") : ok();
        }
        if (key.startsWith("pushbackstop")) {
            return fail(Status.Code.UNAVAILABLE, "-1");
        }
        if (key.startsWith("slowfirst")) {
            return n == 0 ? delayedOk(600) : ok();
        }
        if (key.startsWith("ok")) {
            return ok();
        }
        return fail(Status.Code.UNAVAILABLE); // none, always, deadline, r2 ...
    }

    static List<String> retry(String channel, String target, int maxAttempts, String initialBackoff, String maxBackoff) {
        String m = "grpc.retry.clients." + channel + ".service-config.method[0].";
        return List.of("spring.grpc.client.channel." + channel + ".target=" + target,
                m + "retry.max-attempts=" + maxAttempts,
                m + "retry.initial-backoff=" + initialBackoff,
                m + "retry.max-backoff=" + maxBackoff,
                m + "retry.backoff-multiplier=2",
                m + "retry.retryable-status-codes=unavailable");
    }

    static List<String> throttling(String channel) {
        String t = "grpc.retry.clients." + channel + ".service-config.retrythrottling.";
        return List.of(t + "max-tokens=10", t + "token-ratio=0.1");
    }

    static final int[] RECOVERY = {0, 20, 50, 60, 70, 80, 100};

    @BeforeAll
    static void start() {
        service = new ScriptedService(RetryTablesContextTest::script);
        server = GrpcServerContext.start(service);
        String netty = server.nettyTarget();
        List<String> p = new ArrayList<>();
        p.add("spring.grpc.client.channel.r1-none.target=" + netty);
        p.addAll(retry("r1-policy", netty, 3, "50ms", "1s"));
        p.addAll(retry("r1-max4", netty, 4, "5ms", "20ms"));
        p.addAll(retry("r1-max10", netty, 10, "5ms", "20ms"));
        p.addAll(retry("r1-deadline", netty, 3, "100ms", "1s"));
        p.addAll(retry("r1-buffer", netty, 3, "5ms", "20ms"));
        p.add("grpc.retry.clients.r1-buffer.per-rpc-buffer-limit=256KB");
        p.add("spring.grpc.client.channel.r1-hedging.target=" + netty);
        p.add("grpc.retry.clients.r1-hedging.service-config.method[0].hedging.max-attempts=3");
        p.add("grpc.retry.clients.r1-hedging.service-config.method[0].hedging.delay=100ms");
        p.addAll(retry("r2-plain", netty, 3, "1ms", "2ms"));
        p.addAll(retry("r2-throttled", netty, 3, "1ms", "2ms"));
        p.addAll(throttling("r2-throttled"));
        for (int n : RECOVERY) {
            p.addAll(retry("r2-recover-" + n, netty, 3, "1ms", "2ms"));
            p.addAll(throttling("r2-recover-" + n));
        }
        client = GrpcClientContext.start(p.toArray(String[]::new));
    }

    @AfterAll
    static void stop() {
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
    }

    static Status.Code call(SimpleServiceGrpc.SimpleServiceBlockingStub stub, SimpleRequest request) {
        try {
            stub.withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(request);
            return Status.Code.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode();
        }
    }

    static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    @Test
    void r1NoPolicyOneArrival() {
        assertThat(call(client.stub("r1-none"), request("none"))).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(service.count("none")).isEqualTo(1);
    }

    @Test
    void r1TwoFailuresThreeArrivalsWithBackoffsAndAttemptHeaders() {
        SimpleServiceGrpc.SimpleServiceBlockingStub stub = client.stub("r1-policy");
        for (int i = 0; i < 3; i++) {
            String key = "first2-" + i;
            assertThat(call(stub, request(key))).isEqualTo(Status.Code.OK);
            List<ScriptedService.Arrival> a = service.arrivals(key);
            assertThat(a).hasSize(3);
            assertThat(a).extracting(ScriptedService.Arrival::previousAttempts).containsExactly(null, "1", "2");
            // initial-backoff 50ms, multiplier 2, jitter ±20 %: 40-60 ms then 80-120 ms (+ up to 40 ms of scheduling).
            assertThat(millis(a.get(1).nanoTime() - a.get(0).nanoTime())).isBetween(40L, 100L);
            assertThat(millis(a.get(2).nanoTime() - a.get(1).nanoTime())).isBetween(80L, 160L);
        }
    }

    @Test
    void r1NonRetryableStatusOneArrival() {
        assertThat(call(client.stub("r1-policy"), request("internal"))).isEqualTo(Status.Code.INTERNAL);
        assertThat(service.count("internal")).isEqualTo(1);
    }

    @Test
    void r1MaxAttemptsFourAndTheCapOfFive() {
        assertThat(call(client.stub("r1-max4"), request("always-4"))).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(service.count("always-4")).isEqualTo(4);
        assertThat(call(client.stub("r1-max10"), request("always-10"))).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(service.count("always-10")).isEqualTo(5);
    }

    @Test
    void r1DeadlineBeforeSecondBackoffEndsWithLastStatusAtOnce() {
        long start = System.nanoTime();
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, () -> client.stub("r1-deadline")
                .withDeadlineAfter(220, TimeUnit.MILLISECONDS).unaryRpc(request("deadline")));
        long took = millis(System.nanoTime() - start);
        assertThat(service.count("deadline")).isEqualTo(2);
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(took).isLessThan(220);
    }

    @Test
    void r1PushbackIsHonouredAndMinusOneStops() {
        assertThat(call(client.stub("r1-policy"), request("pushback300"))).isEqualTo(Status.Code.OK);
        List<ScriptedService.Arrival> a = service.arrivals("pushback300");
        assertThat(a).hasSize(2);
        assertThat(millis(a.get(1).nanoTime() - a.get(0).nanoTime())).isBetween(300L, 450L);
        assertThat(call(client.stub("r1-policy"), request("pushbackstop"))).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(service.count("pushbackstop")).isEqualTo(1);
    }

    @Test
    void r1PerRpcBufferLimitCommitsALargeCall() {
        String small = "first2-small|" + "x".repeat(100 * 1024);
        assertThat(call(client.stub("r1-buffer"), SimpleRequest.newBuilder().setRequestMessage(small).build()))
                .isEqualTo(Status.Code.OK);
        assertThat(service.count("first2-small")).isEqualTo(3);
        String large = "first2-large|" + "x".repeat(300 * 1024);
        assertThat(call(client.stub("r1-buffer"), SimpleRequest.newBuilder().setRequestMessage(large).build()))
                .isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(service.count("first2-large")).isEqualTo(1);
    }

    @Test
    void r1HedgeOvertakesASlowFirstAttempt() {
        long start = System.nanoTime();
        assertThat(call(client.stub("r1-hedging"), request("slowfirst"))).isEqualTo(Status.Code.OK);
        long took = millis(System.nanoTime() - start);
        assertThat(service.count("slowfirst")).isGreaterThanOrEqualTo(2);
        // About one hedging delay (100 ms), well before the first attempt's 600 ms.
        assertThat(took).isBetween(95L, 450L);
    }

    static List<Integer> perCall(String prefix, int calls) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            out.add(service.count(prefix + i));
        }
        return out;
    }

    @Test
    void r2WithoutThrottling120ArrivalsWithThrottling43() {
        SimpleServiceGrpc.SimpleServiceBlockingStub plain = client.stub("r2-plain");
        SimpleServiceGrpc.SimpleServiceBlockingStub throttled = client.stub("r2-throttled");
        for (int i = 0; i < 40; i++) {
            call(plain, request("r2-plain-" + i));
            call(throttled, request("r2-throttled-" + i));
        }
        List<Integer> p = perCall("r2-plain-", 40);
        List<Integer> t = perCall("r2-throttled-", 40);
        assertThat(p.stream().mapToInt(Integer::intValue).sum()).isEqualTo(120);
        assertThat(t.stream().mapToInt(Integer::intValue).sum()).isEqualTo(43);
        assertThat(p.subList(0, 12)).containsOnly(3);
        assertThat(t.subList(0, 12)).containsExactly(3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
    }

    @Test
    void r2RecoveryThresholds() {
        int[] expected = {1, 1, 1, 1, 2, 3, 3};
        for (int i = 0; i < RECOVERY.length; i++) {
            int successes = RECOVERY[i];
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = client.stub("r2-recover-" + successes);
            for (int k = 0; k < 10; k++) { // empties the bucket
                call(stub, request("r2-empty-" + successes + "-" + k));
            }
            for (int k = 0; k < successes; k++) {
                assertThat(call(stub, request("ok-" + successes + "-" + k))).isEqualTo(Status.Code.OK);
            }
            String key = "r2-probe-" + successes;
            call(stub, request(key));
            assertThat(service.count(key)).as("%d successes", successes).isEqualTo(expected[i]);
        }
    }
}
