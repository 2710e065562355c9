package io.github.grpcretry.autoconfigure.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.grpcretry.spring.report.RetryStatistics;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import net.devh.boot.grpc.client.inject.GrpcClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The native engine end to end: a net.devh channel whose builder gets the rendered service config
 * with grpc-java retries on and the native-engine interceptor ({@code RetryingClientInterceptor.nativeAttempts}) reporting to the
 * {@code grpcRetryEventListener} bean (what the integration will do); real calls against the
 * scripted server over Netty; meters, endpoint and health read over real HTTP.
 */
@ActiveProfiles("obs-inventory")
@SpringBootTest(classes = NativeEngineActuatorHttpTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
                "grpc.retry.engine=native",
                "management.endpoints.web.exposure.include=health,grpcretry",
                "management.endpoint.health.show-details=always",
                "grpc.server.port=-1",
                "grpc.server.in-process-name=obs-native-unused",
                "grpc.client.inventory.negotiation-type=plaintext"
        })
class NativeEngineActuatorHttpTest {

    private static ScriptedServer server;
    private static final ObjectMapper JSON = new ObjectMapper();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        InventoryClient inventoryClient() {
            return new InventoryClient();
        }
    }

    static class InventoryClient {
        @GrpcClient("inventory")
        SimpleServiceGrpc.SimpleServiceBlockingStub stub;
    }

    /**
     * A Netty server on loopback: net.devh hands a {@code GrpcChannelConfigurer} the client name only
     * for network channels (for {@code in-process:} addresses it passes the in-process name).
     */
    @DynamicPropertySource
    static void serverAddress(DynamicPropertyRegistry registry) throws Exception {
        server = ScriptedServer.startNetty();
        registry.add("grpc.client.inventory.address", () -> "static://" + server.target());
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Autowired
    TestRestTemplate http;
    @Autowired
    InventoryClient client;
    @Autowired
    MeterRegistry meters;
    @Autowired
    RetryStatistics statistics;

    private JsonNode get(String path) throws Exception {
        ResponseEntity<String> response = http.getForEntity(path, String.class);
        assertThat(response.getStatusCode()).as(path + ": " + response.getBody()).isEqualTo(HttpStatus.OK);
        return JSON.readTree(response.getBody());
    }

    private double attempts(String kind, String status) {
        var c = meters.find("grpc.client.retry.attempts").tags("client", "inventory",
                "method", "grpc.testing.SimpleService/UnaryRpc", "kind", kind, "status", status).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void grpcJavaRetriesAreCountedAndShownWithoutInventingTokens() throws Exception {
        // call 1: UNAVAILABLE, UNAVAILABLE, OK; call 2: OK at once (max-attempts 3 from the config)
        server.script(a -> a.index <= 2 ? ScriptedServer.Action.fail(Status.Code.UNAVAILABLE)
                : ScriptedServer.Action.ok());
        client.stub.unaryRpc(SimpleRequest.getDefaultInstance());
        client.stub.unaryRpc(SimpleRequest.getDefaultInstance());
        assertThat(server.arrivalCount()).isEqualTo(4);
        await().atMost(Duration.ofSeconds(5)).until(() -> statistics.counts("inventory").attempts() == 4
                && attempts("initial", "OK") == 1.0);

        assertThat(attempts("initial", "UNAVAILABLE")).isEqualTo(1.0);
        assertThat(attempts("retry", "UNAVAILABLE")).isEqualTo(1.0);
        assertThat(attempts("retry", "OK")).isEqualTo(1.0);
        assertThat(meters.get("grpc.client.call.retries").summary().totalAmount()).isEqualTo(2.0);
        assertThat(meters.find("grpc.client.retry.tokens").gauges()).isEmpty();
        assertThat(meters.get("grpc.client.channel.state").tags("client", "inventory", "state", "READY").gauge()
                .value()).isEqualTo(1.0);

        JsonNode inventory = get("/actuator/grpcretry").path("channels").path("inventory");
        assertThat(inventory.path("engine").asText()).isEqualTo("native");
        assertThat(inventory.path("counts").path("calls").asLong()).isEqualTo(2);
        assertThat(inventory.path("counts").path("attempts").asLong()).isEqualTo(4);
        assertThat(inventory.path("counts").path("retries").asLong()).isEqualTo(2);
        assertThat(inventory.path("counts").path("failedCalls").asLong()).isZero();
        assertThat(inventory.path("counts").path("suppressed").asText())
                .isEqualTo("not observable with the native engine");
        assertThat(inventory.path("limiter").path("throttle").asText())
                .isEqualTo("not observable with the native engine");
        assertThat(inventory.path("config").path("methods").get(0).path("retry").path("maxAttempts").asInt())
                .isEqualTo(3);
        assertThat(inventory.path("connectivityState").asText()).isEqualTo("READY");

        JsonNode health = get("/actuator/health/grpcRetry");
        assertThat(health.path("status").asText()).isEqualTo("UP");
        JsonNode h = health.path("details").path("channels").path("inventory");
        assertThat(h.path("engine").asText()).isEqualTo("native");
        assertThat(h.path("tokens").asText()).isEqualTo("not observable with the native engine");
        assertThat(h.path("maxTokens").asDouble()).isEqualTo(10.0);
        assertThat(h.path("connectivityState").asText()).isEqualTo("READY");
    }
}
