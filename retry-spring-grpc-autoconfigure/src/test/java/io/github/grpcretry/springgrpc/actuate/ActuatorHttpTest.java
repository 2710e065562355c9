package io.github.grpcretry.springgrpc.actuate;

import static io.github.grpcretry.springgrpc.testing.GrpcClientContext.request;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.fail;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.hang;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.springgrpc.testing.GrpcServerContext;
import io.github.grpcretry.springgrpc.testing.ScriptedService;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.grpc.client.GrpcChannelFactory;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * Actuator over real HTTP on Spring Boot 4.1 (Tomcat on a free port): the {@code grpcRetry} health
 * contributor shows the channel's tokens after failed calls through a Spring gRPC channel, and the
 * {@code grpcretry} endpoint answers GET and refuses POST, PUT and DELETE; the HTTP deadline header
 * bounds the gRPC calls a request makes.
 */
class ActuatorHttpTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @RestController
    static class WebApp {
        private final ObjectProvider<GrpcChannelFactory> channels;
        private volatile SimpleServiceGrpc.SimpleServiceBlockingStub slow;

        WebApp(ObjectProvider<GrpcChannelFactory> channels) {
            this.channels = channels;
        }

        /** Calls a service that never answers, with no deadline of its own: the request's header bounds it. */
        @GetMapping("/slow")
        String slow() {
            if (slow == null) {
                slow = SimpleServiceGrpc.newBlockingStub(channels.getObject().createChannel("slow"));
            }
            try {
                slow.unaryRpc(request("hang-http"));
                return "OK";
            } catch (StatusRuntimeException e) {
                return e.getStatus().getCode().name();
            }
        }
    }

    private final HttpClient http = HttpClient.newHttpClient();
    private final ObjectMapper json = new ObjectMapper();

    private HttpResponse<String> send(int port, String method, String path) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
        b.method(method, method.equals("GET") ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString("{}"));
        b.header("Content-Type", "application/json");
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void healthShowsTokensEndpointIsReadOnlyHeaderSetsDeadline() throws Exception {
        ScriptedService service = new ScriptedService((key, n) -> key.startsWith("hang") ? hang() : fail(Status.Code.UNAVAILABLE));
        try (GrpcServerContext server = GrpcServerContext.start(service)) {
            String c = "spring.grpc.client.channel.inventory.";
            String m = "grpc.retry.clients.inventory.service-config.method[0].retry.";
            Map<String, Object> props = new LinkedHashMap<>();
            props.put("server.port", "0");
            props.put("server.address", "127.0.0.1");
            props.put("spring.grpc.server.enabled", "false");
            props.put("management.endpoints.web.exposure.include", "health,grpcretry");
            props.put("management.endpoint.health.show-details", "always");
            props.put(c + "target", server.nettyTarget());
            props.put(m + "max-attempts", "2");
            props.put(m + "initial-backoff", "1ms");
            props.put(m + "max-backoff", "2ms");
            props.put(m + "backoff-multiplier", "2");
            props.put(m + "retryable-status-codes", "UNAVAILABLE");
            props.put("grpc.retry.clients.inventory.service-config.retrythrottling.max-tokens", "10");
            props.put("grpc.retry.clients.inventory.service-config.retrythrottling.token-ratio", "0.1");
            props.put("grpc.retry.health.status-when-throttled", "OUT_OF_SERVICE");
            props.put("spring.grpc.client.channel.slow.target", server.nettyTarget());
            props.put("grpc.retry.deadline.http.header", "X-Request-Timeout-Ms");
            try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(WebApp.class)
                    .web(WebApplicationType.SERVLET).properties(props).run()) {
                int port = ((WebServerApplicationContext) ctx).getWebServer().getPort();
                SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(
                        ctx.getBean(GrpcChannelFactory.class).createChannel("inventory"));
                // Two calls of two failed attempts each: 10 - 4 = 6 tokens, above the threshold of 5.
                for (int i = 0; i < 2; i++) {
                    catchThrowableOfType(StatusRuntimeException.class, () -> stub.unaryRpc(request("health")));
                }
                assertThat(service.count("health")).isEqualTo(4);

                HttpResponse<String> health = send(port, "GET", "/actuator/health/grpcRetry");
                assertThat(health.statusCode()).isEqualTo(200);
                JsonNode h = json.readTree(health.body());
                assertThat(h.path("status").asString()).isEqualTo("UP");
                JsonNode inventory = h.path("details").path("channels").path("inventory");
                assertThat(inventory.path("engine").asString()).isEqualTo("interceptor");
                assertThat(inventory.path("tokens").asDouble()).isEqualTo(6.0);
                assertThat(inventory.path("maxTokens").asDouble()).isEqualTo(10.0);
                assertThat(inventory.path("threshold").asDouble()).isEqualTo(5.0);
                assertThat(inventory.path("throttling").asBoolean()).isFalse();
                assertThat(inventory.path("connectivityState").asString()).isEqualTo("READY");
                assertThat(inventory.path("policySources").toString()).isEqualTo("[\"yaml\"]");
                assertThat(ctx.getBean(io.micrometer.core.instrument.MeterRegistry.class)
                        .get("grpc.client.channel.state").tags("client", "inventory", "state", "READY").gauge().value())
                        .isEqualTo(1.0);

                // One more failing call: 6 -> 5 tokens, throttling; the status the property names.
                catchThrowableOfType(StatusRuntimeException.class, () -> stub.unaryRpc(request("health")));
                HttpResponse<String> throttled = send(port, "GET", "/actuator/health/grpcRetry");
                JsonNode t = json.readTree(throttled.body());
                assertThat(t.path("status").asString()).isEqualTo("OUT_OF_SERVICE");
                assertThat(t.path("details").path("throttling").toString()).contains("inventory");

                HttpResponse<String> all = send(port, "GET", "/actuator/grpcretry");
                assertThat(all.statusCode()).isEqualTo(200);
                JsonNode endpoint = json.readTree(all.body());
                assertThat(endpoint.path("engine").asString()).isEqualTo("interceptor");
                JsonNode config = endpoint.path("channels").path("inventory").path("config");
                assertThat(config.path("methods").get(0).path("retry").path("maxAttempts").asInt()).isEqualTo(2);
                assertThat(endpoint.path("channels").path("inventory").path("counts").path("calls").asLong()).isEqualTo(3);
                assertThat(send(port, "GET", "/actuator/grpcretry/inventory").statusCode()).isEqualTo(200);
                assertThat(send(port, "GET", "/actuator/grpcretry/nosuchchannel").statusCode()).isEqualTo(404);
                for (String method : new String[] {"POST", "PUT", "DELETE"}) {
                    assertThat(send(port, method, "/actuator/grpcretry").statusCode()).as(method).isEqualTo(405);
                    assertThat(send(port, method, "/actuator/grpcretry/inventory").statusCode()).as(method).isEqualTo(405);
                }

                // HTTP ingress: the request's timeout header becomes the deadline of the gRPC call made for it.
                HttpRequest timed = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/slow"))
                        .header("X-Request-Timeout-Ms", "300").build();
                long start = System.nanoTime();
                HttpResponse<String> slow = http.send(timed, HttpResponse.BodyHandlers.ofString());
                long took = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertThat(slow.body()).isEqualTo("DEADLINE_EXCEEDED");
                assertThat(service.count("hang-http")).isEqualTo(1);
                assertThat(took).isBetween(250L, 5000L);
            }
        }
    }
}
