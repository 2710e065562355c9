package io.github.grpcretry.autoconfigure.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.grpcretry.attempt.SuppressionReason;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import net.devh.boot.grpc.client.inject.GrpcClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.annotation.DirtiesContext;
import io.grpc.StatusRuntimeException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;

/**
 * Health contributor and endpoint over real HTTP, interceptor engine: a real RetryThrottle is drained
 * and refilled; the engine's events come through the {@code grpcRetryEventListener} bean the engine
 * is given.
 */
@ActiveProfiles("obs-inventory")
@DirtiesContext(classMode = DirtiesContext.ClassMode.BEFORE_EACH_TEST_METHOD)
@SpringBootTest(classes = GrpcRetryActuatorHttpTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
                "management.endpoints.web.exposure.include=health,grpcretry",
                "management.endpoint.health.show-details=always",
                "management.endpoint.health.probes.enabled=true",
                "grpc.retry.health.status-when-throttled=OUT_OF_SERVICE",
                "grpc.server.port=-1",
                "grpc.server.in-process-name=obs-http-unused",
                "grpc.client.inventory.address=in-process:obs-http-inventory"
        })
class GrpcRetryActuatorHttpTest {

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

    @BeforeAll
    static void startServer() throws Exception {
        server = ScriptedServer.start("obs-http-inventory");
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Autowired
    TestRestTemplate http;
    @Autowired
    RetryLimiterRegistry limiters;
    @Autowired
    InventoryClient client;
    @Autowired
    MeterRegistry meters;

    private JsonNode get(String path, HttpStatus expected) throws Exception {
        ResponseEntity<String> response = http.getForEntity(path, String.class);
        assertThat(response.getStatusCode()).as(path + ": " + response.getBody()).isEqualTo(expected);
        return response.getBody() == null ? JSON.nullNode() : JSON.readTree(response.getBody());
    }

    @Test
    void healthIsUpThenConfiguredWhileThrottledNotInLiveness() throws Exception {
        client.stub.unaryRpc(SimpleRequest.getDefaultInstance());
        RetryThrottle throttle = limiters.throttle("inventory", ObservabilityTestConfigs.THROTTLING).orElseThrow();

        JsonNode up = get("/actuator/health/grpcRetry", HttpStatus.OK);
        assertThat(up.path("status").asText()).isEqualTo("UP");
        JsonNode inventory = up.path("details").path("channels").path("inventory");
        assertThat(inventory.path("engine").asText()).isEqualTo("interceptor");
        assertThat(inventory.path("tokens").asDouble()).isEqualTo(10.0);
        assertThat(inventory.path("maxTokens").asDouble()).isEqualTo(10.0);
        assertThat(inventory.path("threshold").asDouble()).isEqualTo(5.0);
        assertThat(inventory.path("throttling").asBoolean()).isFalse();
        assertThat(inventory.path("connectivityState").asText()).isEqualTo("READY");

        for (int i = 0; i < 6; i++) {
            throttle.onQualifiedFailureThenCheckAllowed(); // 10 -> 4
        }
        JsonNode throttled = get("/actuator/health/grpcRetry", HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(throttled.path("status").asText()).isEqualTo("OUT_OF_SERVICE");
        assertThat(throttled.path("details").path("throttling").get(0).asText()).isEqualTo("inventory");
        assertThat(throttled.path("details").path("channels").path("inventory").path("tokens").asDouble())
                .isEqualTo(4.0);
        assertThat(throttled.path("details").path("channels").path("inventory").path("throttling").asBoolean())
                .isTrue();
        assertThat(get("/actuator/health", HttpStatus.SERVICE_UNAVAILABLE).path("status").asText())
                .isEqualTo("OUT_OF_SERVICE");
        // liveness: only livenessState; a throttled downstream never gets this process restarted
        JsonNode liveness = get("/actuator/health/liveness", HttpStatus.OK);
        assertThat(liveness.path("status").asText()).isEqualTo("UP");
        assertThat(liveness.path("components").has("grpcRetry")).isFalse();

        for (int i = 0; i < 11; i++) {
            throttle.onSuccess(); // 4 -> 5.1, above the threshold again
        }
        assertThat(throttle.tokens()).isEqualTo(5.1, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(get("/actuator/health/grpcRetry", HttpStatus.OK).path("status").asText()).isEqualTo("UP");
    }

    @Test
    void endpointShowsConfigLimitersAndCountsAndIsReadOnly() throws Exception {
        // Real calls through the interceptor engine (budget 10 % with no floor, so it starts empty):
        // call 1 fails once and its retry is refused by the budget (0.1 < 1); nine calls succeed and
        // fill the budget to 1.0; call 11 fails once and is retried successfully (budget back to 0.1).
        server.reset();
        server.script(a -> a.index == 1 || a.index == 11 ? ScriptedServer.Action.fail(Status.Code.UNAVAILABLE)
                : ScriptedServer.Action.ok());
        assertThatThrownBy(() -> client.stub.unaryRpc(SimpleRequest.getDefaultInstance()))
                .isInstanceOf(StatusRuntimeException.class);
        for (int i = 0; i < 10; i++) {
            client.stub.unaryRpc(SimpleRequest.getDefaultInstance());
        }
        assertThat(server.arrivalCount()).isEqualTo(12);

        JsonNode all = get("/actuator/grpcretry", HttpStatus.OK);
        assertThat(all.path("engine").asText()).isEqualTo("interceptor");
        // one channel: net.devh's in-process key is mapped back to the client name
        assertThat(all.path("channels").size()).as(all.toString()).isEqualTo(1);
        JsonNode inventory = all.path("channels").path("inventory");
        JsonNode config = inventory.path("config");
        assertThat(config.path("maxAttemptsCap").asInt()).isEqualTo(5);
        assertThat(config.path("perRpcBufferLimit").asText()).as("sizes as users write them").isEqualTo("1MB");
        assertThat(config.path("perRpcBufferLimitBytes").asLong()).isEqualTo(1L << 20);
        assertThat(config.path("retryBufferSize").asText()).isEqualTo("16MB");
        assertThat(config.path("retryBufferSizeBytes").asLong()).isEqualTo(16L << 20);
        assertThat(config.path("budget").path("ratio").asDouble()).isEqualTo(0.1);
        assertThat(config.path("budget").path("ttl").asText()).as("durations as users write them").isEqualTo("10s");
        assertThat(config.path("retryThrottling").path("maxTokens").asDouble()).isEqualTo(10.0);
        assertThat(config.path("retryThrottling").path("tokenRatio").asDouble()).isEqualTo(0.1);
        JsonNode methods = config.path("methods");
        assertThat(methods.size()).isEqualTo(2);
        assertThat(methods.get(0).path("names").get(0).asText()).isEqualTo("grpc.testing.SimpleService/*");
        assertThat(methods.get(0).path("timeout").asText()).isEqualTo("5s");
        JsonNode retry = methods.get(0).path("retry");
        assertThat(retry.path("maxAttempts").asInt()).isEqualTo(3);
        assertThat(retry.path("initialBackoff").asText()).isEqualTo("50ms");
        assertThat(retry.path("maxBackoff").asText()).isEqualTo("200ms");
        assertThat(retry.path("backoffMultiplier").asDouble()).isEqualTo(2.0);
        assertThat(retry.path("retryableStatusCodes").get(0).asText()).isEqualTo("UNAVAILABLE");
        assertThat(methods.get(1).path("names").get(0).asText()).isEqualTo("*");
        assertThat(methods.get(1).path("waitForReady").asBoolean()).isTrue();
        assertThat(methods.get(1).path("maxResponseMessage").asText()).isEqualTo("4KB");
        assertThat(methods.get(1).path("maxResponseMessageBytes").asLong()).isEqualTo(4096);
        assertThat(methods.get(1).has("retry")).isFalse();

        JsonNode throttle = inventory.path("limiter").path("throttle");
        assertThat(throttle.path("maxTokens").asDouble()).isEqualTo(10.0);
        assertThat(throttle.path("threshold").asDouble()).isEqualTo(5.0);
        assertThat(throttle.path("tokenRatio").asDouble()).isEqualTo(0.1);
        JsonNode budget = inventory.path("limiter").path("budget");
        assertThat(budget.path("callsInWindow").asLong()).isEqualTo(11);
        assertThat(budget.path("retriesInWindow").asLong()).isEqualTo(1);
        // 11 calls x 0.1 - 1 retry
        assertThat(budget.path("balance").asDouble()).isEqualTo(0.1, org.assertj.core.data.Offset.offset(1e-9));

        JsonNode counts = inventory.path("counts");
        assertThat(counts.path("calls").asLong()).isEqualTo(11);
        assertThat(counts.path("failedCalls").asLong()).isEqualTo(1);
        assertThat(counts.path("attempts").asLong()).isEqualTo(12);
        assertThat(counts.path("retries").asLong()).isEqualTo(1);
        assertThat(counts.path("hedges").asLong()).isZero();
        assertThat(counts.path("suppressed").path("budget").asLong()).isEqualTo(1);
        assertThat(counts.path("suppressed").path("throttled").asLong()).isZero();
        assertThat(counts.path("suppressed").path("max_extra_load").asLong()).isZero();
        assertThat(counts.path("suppressed").size()).as("every reason").isEqualTo(SuppressionReason.values().length);
        assertThat(inventory.path("connectivityState").asText()).isEqualTo("READY");

        JsonNode one = get("/actuator/grpcretry/inventory", HttpStatus.OK);
        assertThat(one).isEqualTo(inventory);
        get("/actuator/grpcretry/nosuchchannel", HttpStatus.NOT_FOUND);

        // read-only: no write or delete operation exists
        for (HttpMethod method : new HttpMethod[] {HttpMethod.POST, HttpMethod.PUT, HttpMethod.DELETE}) {
            ResponseEntity<String> r = http.exchange("/actuator/grpcretry", method, new HttpEntity<>("{}"),
                    String.class);
            assertThat(r.getStatusCode()).as(method.name()).isEqualTo(HttpStatus.METHOD_NOT_ALLOWED);
            ResponseEntity<String> r2 = http.exchange("/actuator/grpcretry/inventory", method,
                    new HttpEntity<>("{}"), String.class);
            assertThat(r2.getStatusCode()).as(method.name()).isEqualTo(HttpStatus.METHOD_NOT_ALLOWED);
        }

        // the same events fed the meters
        assertThat(meters.get("grpc.client.retry.attempts").tags("client", "inventory", "kind", "initial",
                "status", "UNAVAILABLE").counter().count()).isEqualTo(2.0);
        assertThat(meters.get("grpc.client.retry.suppressed").tags("reason", "budget").counter().count())
                .isEqualTo(1.0);
        await().atMost(Duration.ofSeconds(5)).until(() -> meters.find("grpc.client.channel.state")
                .tags("client", "inventory", "state", "READY").gauge().value() == 1.0);
    }
}
