package io.github.grpcretry.spring.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.metrics.MicrometerRetryEventListener;
import io.github.grpcretry.testing.RefusingHttp2Server;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The native engine: grpc-java retries, the interceptor's stream tracers report attempts. Real
 * servers: the scripted in-process server, and a plain HTTP/2 server for transparent retries.
 */
class NativeAttemptInterceptorTest {

    private static final String UNARY = "grpc.testing.SimpleService/UnaryRpc";

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final RetryStatistics stats = new RetryStatistics();
    private final RetryEventListener listener =
            RetryEventListener.composite(List.of(new MicrometerRetryEventListener(registry), stats));
    private ManagedChannel channel;

    @AfterEach
    void closeChannel() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static Map<String, Object> serviceConfig(Map<String, Object> policyEntry) {
        return Map.of("methodConfig", List.of(policyEntry));
    }

    private static Map<String, Object> retryPolicy(double maxAttempts) {
        return Map.of(
                "name", List.of(Map.of("service", "grpc.testing.SimpleService")),
                "retryPolicy", Map.of(
                        "maxAttempts", maxAttempts,
                        "initialBackoff", "0.05s",
                        "maxBackoff", "0.1s",
                        "backoffMultiplier", 2.0,
                        "retryableStatusCodes", List.of("UNAVAILABLE")));
    }

    private ManagedChannel nativeChannel(ManagedChannelBuilder<?> builder, Map<String, Object> config) {
        channel = builder.defaultServiceConfig(config)
                .enableRetry()
                .maxRetryAttempts(5)
                .maxHedgedAttempts(5)
                .intercept(RetryingClientInterceptor.nativeAttempts("inventory", "inventory", listener))
                .build();
        return channel;
    }

    private double attempts(String kind, String status) {
        var c = registry.find("grpc.client.retry.attempts")
                .tags("client", "inventory", "method", UNARY, "kind", kind, "status", status).counter();
        return c == null ? 0 : c.count();
    }

    private double allAttempts() {
        return registry.find("grpc.client.retry.attempts").counters().stream().mapToDouble(c -> c.count()).sum();
    }

    @Test
    void retriesOfGrpcJavaAreCountedByKindAndStatus() throws Exception {
        try (ScriptedServer server = ScriptedServer.start("native-retry")) {
            // two failures whose pushback fixes each backoff at exactly 100 ms (no jitter)
            server.script(a -> a.index <= 2
                    ? ScriptedServer.Action.fail(Status.Code.UNAVAILABLE).pushback("100")
                    : ScriptedServer.Action.ok());
            var stub = SimpleServiceGrpc.newBlockingStub(
                    nativeChannel(InProcessChannelBuilder.forName("native-retry").directExecutor(),
                            serviceConfig(retryPolicy(4))));

            stub.unaryRpc(SimpleRequest.newBuilder().setRequestMessage("x").build());

            assertThat(server.arrivalCount()).isEqualTo(3);
            await().atMost(Duration.ofSeconds(5)).until(() -> allAttempts() == 3);
            assertThat(attempts("initial", "UNAVAILABLE")).isEqualTo(1);
            assertThat(attempts("retry", "UNAVAILABLE")).isEqualTo(1);
            assertThat(attempts("retry", "OK")).isEqualTo(1);
            var retries = registry.get("grpc.client.call.retries").summary();
            assertThat(retries.count()).isEqualTo(1);
            assertThat(retries.totalAmount()).isEqualTo(2.0);
            // two pauses of 100 ms with no attempt on the wire
            var delay = registry.get("grpc.client.call.retry_delay").timer();
            assertThat(delay.count()).isEqualTo(1);
            assertThat(delay.totalTime(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(199.0).isLessThan(5_000.0);
            long firstToLast = server.arrivals().get(2).nanoTime - server.arrivals().get(0).nanoTime;
            assertThat(delay.totalTime(TimeUnit.NANOSECONDS)).isLessThanOrEqualTo(firstToLast);
            assertThat(stats.counts("inventory").calls()).isEqualTo(1);
            assertThat(stats.counts("inventory").attempts()).isEqualTo(3);
            assertThat(stats.counts("inventory").retries()).isEqualTo(2);
            assertThat(stats.counts("inventory").failedCalls()).isZero();
        }
    }

    @Test
    void exhaustedRetriesEndTheCallWithTheLastStatus() throws Exception {
        try (ScriptedServer server = ScriptedServer.start("native-exhausted")) {
            server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
            var stub = SimpleServiceGrpc.newBlockingStub(
                    nativeChannel(InProcessChannelBuilder.forName("native-exhausted").directExecutor(),
                            serviceConfig(retryPolicy(3))));

            StatusRuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(StatusRuntimeException.class,
                    () -> stub.unaryRpc(SimpleRequest.getDefaultInstance()));
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            await().atMost(Duration.ofSeconds(5)).until(() -> allAttempts() == 3);
            assertThat(attempts("initial", "UNAVAILABLE")).isEqualTo(1);
            assertThat(attempts("retry", "UNAVAILABLE")).isEqualTo(2);
            assertThat(stats.counts("inventory").failedCalls()).isEqualTo(1);
            // the native engine tells no reasons: nothing is invented
            assertThat(registry.find("grpc.client.retry.suppressed").meters()).isEmpty();
        }
    }

    @Test
    void aRetryWhoseBackoffTheCallDoesNotOutliveIsNoAttempt() throws Exception {
        try (ScriptedServer server = ScriptedServer.start("native-backoff-cut")) {
            // the first attempt fails with a pushback of 5 s: grpc-java makes the retry's stream (and
            // asks its tracers) at once, then waits; the call's 300 ms deadline ends it first
            server.script(a -> a.index == 1
                    ? ScriptedServer.Action.fail(Status.Code.UNAVAILABLE).pushback("5000")
                    : ScriptedServer.Action.ok());
            var stub = SimpleServiceGrpc.newBlockingStub(
                    nativeChannel(InProcessChannelBuilder.forName("native-backoff-cut").directExecutor(),
                            serviceConfig(retryPolicy(3))));

            StatusRuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(StatusRuntimeException.class,
                    () -> stub.withDeadlineAfter(300, TimeUnit.MILLISECONDS).unaryRpc(SimpleRequest.getDefaultInstance()));
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
            assertThat(server.arrivalCount()).isEqualTo(1);
            await().atMost(Duration.ofSeconds(5)).until(() -> stats.counts("inventory").failedCalls() == 1);
            // one attempt went out and ended; the retry that never left is neither started nor ended
            assertThat(stats.counts("inventory").attempts()).isEqualTo(1);
            assertThat(stats.counts("inventory").retries()).isZero();
            assertThat(allAttempts()).isEqualTo(1);
            assertThat(attempts("initial", "UNAVAILABLE")).isEqualTo(1);
            assertThat(registry.find("grpc.client.call.retries").meters()).isEmpty();
        }
    }

    @Test
    void hedgedAttemptsAreCountedAsHedgesAndLosersAsCancelled() throws Exception {
        try (ScriptedServer server = ScriptedServer.start("native-hedge")) {
            // the first attempt answers late, the first hedge fails (non-fatal), the second hedge wins
            server.script(a -> switch (a.index) {
                case 1 -> ScriptedServer.Action.ok().delay(3_000);
                case 2 -> ScriptedServer.Action.fail(Status.Code.UNAVAILABLE);
                default -> ScriptedServer.Action.ok();
            });
            Map<String, Object> hedging = Map.of(
                    "name", List.of(Map.of("service", "grpc.testing.SimpleService")),
                    "hedgingPolicy", Map.of(
                            "maxAttempts", 3.0,
                            "hedgingDelay", "0.2s",
                            "nonFatalStatusCodes", List.of("UNAVAILABLE")));
            var stub = SimpleServiceGrpc.newBlockingStub(
                    nativeChannel(InProcessChannelBuilder.forName("native-hedge").directExecutor(),
                            serviceConfig(hedging)));

            stub.unaryRpc(SimpleRequest.getDefaultInstance());

            assertThat(server.arrivalCount()).isEqualTo(3);
            await().atMost(Duration.ofSeconds(5)).until(() -> allAttempts() == 3);
            assertThat(attempts("initial", "CANCELLED")).isEqualTo(1);
            assertThat(attempts("hedge", "UNAVAILABLE")).isEqualTo(1);
            assertThat(attempts("hedge", "OK")).isEqualTo(1);
            var hedges = registry.get("grpc.client.call.hedges").summary();
            assertThat(hedges.count()).isEqualTo(1);
            assertThat(hedges.totalAmount()).isEqualTo(2.0);
            assertThat(registry.find("grpc.client.call.retries").meters()).isEmpty();
            assertThat(stats.counts("inventory").hedges()).isEqualTo(2);
        }
    }

    @Test
    void transparentRetriesAreNotCountedAsAttempts() throws Exception {
        try (RefusingHttp2Server server = new RefusingHttp2Server()) {
            // stream 1 refused (grpc-java re-sends it transparently), stream 2 UNAVAILABLE (a real
            // failure of attempt 1), stream 3 OK (the retry)
            server.script(n -> switch (n) {
                case 1 -> new RefusingHttp2Server.Refuse();
                case 2 -> new RefusingHttp2Server.Fail(Status.Code.UNAVAILABLE);
                default -> new RefusingHttp2Server.Ok();
            });
            var stub = SimpleServiceGrpc.newBlockingStub(
                    nativeChannel(NettyChannelBuilder.forTarget(server.target()).usePlaintext(),
                            serviceConfig(retryPolicy(3))));

            stub.withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(SimpleRequest.getDefaultInstance());

            assertThat(server.streams()).isEqualTo(3);
            assertThat(server.paths()).containsOnly("/" + UNARY);
            await().atMost(Duration.ofSeconds(5)).until(() -> stats.counts("inventory").calls() == 1
                    && registry.find("grpc.client.call.retries").summary() != null);
            assertThat(allAttempts()).isEqualTo(2);
            assertThat(attempts("initial", "UNAVAILABLE")).isEqualTo(1);
            assertThat(attempts("retry", "OK")).isEqualTo(1);
            assertThat(stats.counts("inventory").attempts()).isEqualTo(2);
            assertThat(stats.counts("inventory").retries()).isEqualTo(1);
            assertThat(registry.get("grpc.client.call.retries").summary().totalAmount()).isEqualTo(1.0);
        }
    }
}
