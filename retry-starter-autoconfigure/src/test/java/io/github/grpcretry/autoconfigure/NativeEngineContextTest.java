package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;

/**
 * engine=native: grpc-java's own retry configured from YAML-shaped properties through net.devh,
 * against a real in-process server (docs/design.md §17 (R1), the rows grpc-java can do).
 */
@ExtendWith(OutputCaptureExtension.class)
class NativeEngineContextTest {

    private static final String M = "grpc.retry.clients.inventory.service-config.method[0].";
    /**
     * Added to an upper time bound: a loaded machine (a parallel build, a GC pause) only delays an
     * attempt, never hastens it, so lower bounds are exact and upper bounds carry this margin.
     */
    private static final long LOAD_MARGIN_MS = 1_000;

    private ScriptedServer server;
    private String serverName;

    @BeforeEach
    void startServer() throws Exception {
        serverName = "native-" + UUID.randomUUID();
        server = ScriptedServer.start(serverName);
    }

    @AfterEach
    void stopServer() {
        server.close();
    }

    private ApplicationContextRunner runner(String... extra) {
        List<String> props = new ArrayList<>(List.of(
                "grpc.client.inventory.address=in-process:" + serverName,
                "grpc.retry.engine=native",
                M + "name[0].service=grpc.testing.SimpleService",
                M + "retry.max-attempts=3",
                M + "retry.initial-backoff=50ms",
                M + "retry.max-backoff=1s",
                M + "retry.backoff-multiplier=2",
                M + "retry.retryable-status-codes=unavailable"));
        props.addAll(List.of(extra));
        return RetryTestContexts.runner().withPropertyValues(props.toArray(String[]::new));
    }

    private void withChannel(ApplicationContextRunner runner, Consumer<SimpleServiceGrpc.SimpleServiceBlockingStub> body) {
        runner.run(ctx -> {
            assertThat(ctx).hasNotFailed();
            body.accept(stub(ctx));
        });
    }

    private static SimpleServiceGrpc.SimpleServiceBlockingStub stub(ApplicationContext ctx) {
        Channel channel = ctx.getBean(GrpcChannelFactory.class).createChannel("inventory");
        return SimpleServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    private static SimpleRequest request(String text) {
        return SimpleRequest.newBuilder().setRequestMessage(text).build();
    }

    private static long gapMillis(List<Arrival> arrivals, int i) {
        return TimeUnit.NANOSECONDS.toMillis(arrivals.get(i).nanoTime - arrivals.get(i - 1).nanoTime);
    }

    @Test
    void noPolicyMeansOneArrival() {
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        RetryTestContexts.runner()
                .withPropertyValues("grpc.client.inventory.address=in-process:" + serverName, "grpc.retry.engine=native")
                .run(ctx -> {
                    assertThatThrownBy(() -> stub(ctx).unaryRpc(request("x")))
                            .isInstanceOfSatisfying(StatusRuntimeException.class,
                                    e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
                    assertThat(server.arrivalCount()).isEqualTo(1);
                });
    }

    @Test
    void twoFailuresThenSuccessWithBackoffGapsAndAttemptHeader() {
        server.script(ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE));
        // max-backoff far above the backoffs: a retry that waited max-backoff shows beyond any margin
        withChannel(runner(M + "retry.max-backoff=30s"), stub -> {
            SimpleResponse r = stub.unaryRpc(request("hello"));
            assertThat(r.getResponseMessage()).isEqualTo("hello");
            List<Arrival> arrivals = server.arrivals();
            assertThat(arrivals).hasSize(3);
            assertThat(arrivals).extracting(a -> a.previousAttempts).containsExactly(null, 1, 2);
            // backoff 50ms then 100ms, each x U(0.8, 1.2): [40, 60] and [80, 120]. The server stamps an
            // arrival before it answers and a timer never fires early, so the lower bounds are exact (the
            // second also shows the multiplier); load only adds time, so the upper bounds carry a margin.
            assertThat(gapMillis(arrivals, 1)).isBetween(40L, 60L + LOAD_MARGIN_MS);
            assertThat(gapMillis(arrivals, 2)).isBetween(80L, 120L + LOAD_MARGIN_MS);
        });
    }

    @Test
    void internalIsNotRetried() {
        server.script(ScriptedServer.always(Status.Code.INTERNAL));
        withChannel(runner(), stub -> {
            assertThatThrownBy(() -> stub.unaryRpc(request("x")))
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL));
            assertThat(server.arrivalCount()).isEqualTo(1);
        });
    }

    @Test
    void maxAttemptsFourGivesFourArrivals(CapturedOutput output) {
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        withChannel(runner(M + "retry.max-attempts=4", M + "retry.initial-backoff=5ms"), stub -> {
            assertThatThrownBy(() -> stub.unaryRpc(request("x"))).isInstanceOf(StatusRuntimeException.class);
            assertThat(server.arrivalCount()).isEqualTo(4);
        });
        assertThat(output.getAll()).doesNotContain("is above the max-attempts-cap");
    }

    @Test
    void maxAttemptsTenIsCappedAtFiveWithOneWarningNamingTheProperty(CapturedOutput output) {
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        withChannel(runner(M + "retry.max-attempts=10", M + "retry.initial-backoff=5ms"), stub -> {
            assertThatThrownBy(() -> stub.unaryRpc(request("x"))).isInstanceOf(StatusRuntimeException.class);
            assertThat(server.arrivalCount()).isEqualTo(5);
        });
        String warning = "grpc.retry.clients.inventory.service-config.method[0].retry.max-attempts = 10"
                + " is above the max-attempts-cap 5";
        assertThat(output.getAll()).contains(warning).contains("WARN");
        assertThat(output.getAll().split(java.util.regex.Pattern.quote(warning), -1)).hasSize(2);
    }

    @Test
    void headersBeforeFailureCommitTheCall() {
        server.script(a -> Action.fail(Status.Code.UNAVAILABLE).headersFirst());
        withChannel(runner(), stub -> {
            assertThatThrownBy(() -> stub.unaryRpc(request("x")))
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
            assertThat(server.arrivalCount()).isEqualTo(1);
        });
    }

    @Test
    void pushback300DelaysTheRetry() {
        server.script(a -> a.index == 1 ? Action.fail(Status.Code.UNAVAILABLE).pushback("300") : Action.ok());
        withChannel(runner(), stub -> {
            assertThat(stub.unaryRpc(request("p")).getResponseMessage()).isEqualTo("p");
            List<Arrival> arrivals = server.arrivals();
            assertThat(arrivals).hasSize(2);
            // the pushback replaces the backoff exactly (no jitter): at least 300 ms
            assertThat(gapMillis(arrivals, 1)).isBetween(300L, 300L + LOAD_MARGIN_MS);
        });
    }

    @Test
    void negativePushbackStopsRetrying() {
        server.script(a -> Action.fail(Status.Code.UNAVAILABLE).pushback("-1"));
        withChannel(runner(M + "retry.initial-backoff=4s", M + "retry.max-backoff=8s"), stub -> {
            long start = System.nanoTime();
            assertThatThrownBy(() -> stub.unaryRpc(request("x")))
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
            // the call ended without waiting out a backoff (at least 0.8 x 4 s) ...
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(3_200L);
            // ... and, the call being over, no retry can still arrive
            assertThat(server.arrivalCount()).isEqualTo(1);
        });
    }

    /**
     * Buffer limits need a real transport: the in-process transport does not serialize messages, so
     * grpc-java cannot count buffered bytes there. These two run over Netty on loopback.
     */
    private void overNetty(String limitProperty, Consumer<SimpleServiceGrpc.SimpleServiceBlockingStub> body) throws Exception {
        try (ScriptedServer netty = ScriptedServer.startNetty()) {
            netty.script(ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE));
            server = netty;
            List<String> props = new ArrayList<>(List.of(
                    "grpc.client.inventory.address=static://" + netty.target(),
                    "grpc.client.inventory.negotiation-type=plaintext"));
            if (limitProperty != null) {
                props.add(limitProperty);
            }
            withChannel(runner(props.toArray(String[]::new)), body);
        }
    }

    @Test
    void requestOverThePerRpcBufferLimitIsNotRetried() throws Exception {
        ScriptedServer inProcess = server;
        try {
            overNetty("grpc.retry.clients.inventory.per-rpc-buffer-limit=64KB", stub -> {
                assertThatThrownBy(() -> stub.unaryRpc(request("x".repeat(100 * 1024))))
                        .isInstanceOfSatisfying(StatusRuntimeException.class,
                                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
                assertThat(server.arrivalCount()).isEqualTo(1);
            });
        } finally {
            server = inProcess;
        }
    }

    @Test
    void request100KibUnderTheDefaultLimitIsRetried() throws Exception {
        ScriptedServer inProcess = server;
        try {
            overNetty(null, stub -> {
                String big = "y".repeat(100 * 1024);
                assertThat(stub.unaryRpc(request(big)).getResponseMessage()).hasSize(big.length());
                assertThat(server.arrivalCount()).isEqualTo(3);
            });
        } finally {
            server = inProcess;
        }
    }

    @Test
    void jsonFileAloneConfiguresTheNativeEngine() {
        server.script(ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE));
        RetryTestContexts.runner()
                .withPropertyValues("grpc.client.inventory.address=in-process:" + serverName, "grpc.retry.engine=native",
                        "grpc.retry.clients.inventory.service-config-file=classpath:service-configs/simple-retry.json")
                .run(ctx -> {
                    assertThat(stub(ctx).unaryRpc(request("f")).getResponseMessage()).isEqualTo("f");
                    assertThat(server.arrivalCount()).isEqualTo(3);
                });
    }

    @Test
    void interceptorEngineLeavesRetryToTheInterceptor() {
        // engine=interceptor hands grpc-java the service config without its retry parts: only our engine
        // retries, so the policy's 3 attempts arrive (not 3 x 3), each numbered once.
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        withChannel(runner("grpc.retry.engine=interceptor"), stub -> {
            assertThatThrownBy(() -> stub.unaryRpc(request("x"))).isInstanceOf(StatusRuntimeException.class);
            assertThat(server.arrivalCount()).isEqualTo(3);
            assertThat(server.arrivals()).extracting(a -> a.previousAttempts).containsExactly(null, 1, 2);
        });
    }

    @Test
    void maxAttemptsCapOneTurnsNativeRetriesOff() {
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        withChannel(runner("grpc.retry.clients.inventory.max-attempts-cap=1"), stub -> {
            assertThatThrownBy(() -> stub.unaryRpc(request("x"))).isInstanceOf(StatusRuntimeException.class);
            assertThat(server.arrivalCount()).isEqualTo(1);
        });
    }
}
