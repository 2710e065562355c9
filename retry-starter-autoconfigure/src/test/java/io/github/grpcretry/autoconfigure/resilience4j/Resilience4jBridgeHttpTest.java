package io.github.grpcretry.autoconfigure.resilience4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.client.inject.GrpcClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
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

/**
 * The resilience4j bridge in a whole Spring Boot application (every auto-configuration on the test
 * classpath, resilience4j-spring-boot3 and resilience4j-micrometer included) configured in YAML
 * ({@code application-r4j-bridge.yml}): an {@code @GrpcClient} stub's calls are retried as the
 * resilience4j instance says, and resilience4j's own Actuator endpoints and meters show them over real
 * HTTP.
 */
@ActiveProfiles("r4j-bridge")
@SpringBootTest(classes = Resilience4jBridgeHttpTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class Resilience4jBridgeHttpTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static ScriptedServer server;

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

    @BeforeAll
    static void startServer() throws Exception {
        server = ScriptedServer.start("r4j-http-inventory");
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Autowired
    TestRestTemplate http;
    @Autowired
    InventoryClient client;

    private JsonNode get(String path) throws Exception {
        ResponseEntity<String> response = http.getForEntity(path, String.class);
        assertThat(response.getStatusCode()).as(path + ": " + response.getBody()).isEqualTo(HttpStatus.OK);
        return JSON.readTree(response.getBody());
    }

    private SimpleServiceGrpc.SimpleServiceBlockingStub stub() {
        return client.stub.withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    private static List<String> types(JsonNode events) {
        List<String> out = new ArrayList<>();
        events.path("retryEvents").forEach(e -> out.add(e.path("type").asText()));
        return out;
    }

    private double r4jCalls(String kind) throws Exception {
        JsonNode m = get("/actuator/metrics/resilience4j.retry.calls?tag=name:backend&tag=kind:" + kind);
        return m.path("measurements").get(0).path("value").asDouble();
    }

    @Test
    void callsShowInRetryEventsEndpointAndResilience4jMeters() throws Exception {
        server.reset();
        server.script(ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE));
        assertThat(stub().unaryRpc(SimpleRequest.newBuilder().setRequestMessage("a").build()).getResponseMessage())
                .isEqualTo("a");
        assertThat(server.arrivals()).extracting(a -> a.previousAttempts).containsExactly(null, 1, 2);

        server.reset();
        server.script(a -> Action.fail(Status.Code.PERMISSION_DENIED));
        assertThatThrownBy(() -> stub().unaryRpc(SimpleRequest.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
        assertThat(server.arrivalCount()).isEqualTo(1);

        JsonNode events = get("/actuator/retryevents/backend");
        assertThat(types(events)).containsExactly("RETRY", "RETRY", "SUCCESS", "IGNORED_ERROR");
        JsonNode firstRetry = events.path("retryEvents").get(0);
        assertThat(firstRetry.path("retryName").asText()).isEqualTo("backend");
        assertThat(firstRetry.path("errorMessage").asText()).contains("StatusRuntimeException").contains("UNAVAILABLE");
        assertThat(events.path("retryEvents").get(3).path("errorMessage").asText()).contains("PERMISSION_DENIED");

        JsonNode retries = get("/actuator/retries");
        assertThat(retries.path("retries")).extracting(JsonNode::asText).contains("backend");

        assertThat(r4jCalls("successful_with_retry")).isEqualTo(1.0);
        assertThat(r4jCalls("failed_without_retry")).isEqualTo(1.0);
        assertThat(r4jCalls("successful_without_retry")).isZero();

        JsonNode channel = get("/actuator/grpcretry/inventory");
        assertThat(channel.toString()).contains("\"resilience4jRetry\":\"backend\"");
    }
}
