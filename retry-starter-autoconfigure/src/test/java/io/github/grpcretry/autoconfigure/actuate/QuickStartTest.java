package io.github.grpcretry.autoconfigure.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.grpcretry.testing.RepositoryDocs;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The README's Spring Boot 3.5 quick start, run as written: its YAML and the endpoint section's YAML as
 * the application's configuration files, the web and Actuator starters the section names on the class
 * path; the {@code grpcretry} endpoint answers over HTTP with the quick start's channel.
 */
class QuickStartTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
    }

    @Test
    void theQuickStartShowsItsChannelOnTheEndpointOverHttp(@TempDir Path dir) throws Exception {
        String location = RepositoryDocs.find().writeQuickStart("## Quick start (Spring Boot 3.5, net.devh)", dir);
        try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(App.class).web(WebApplicationType.SERVLET)
                .properties("spring.config.location=" + location, "server.port=0",
                        "server.address=127.0.0.1", "spring.main.banner-mode=off")
                .run()) {
            int port = ((WebServerApplicationContext) ctx).getWebServer().getPort();
            HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/actuator/grpcretry")).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            JsonNode inventory = new ObjectMapper().readTree(response.body()).path("channels").path("inventory");
            assertThat(inventory.path("config").path("methods").get(0).path("retry").path("maxAttempts").asInt()).isEqualTo(3);
            assertThat(inventory.path("policy").path("sources").toString()).isEqualTo("[\"yaml\"]");
        }
    }
}
