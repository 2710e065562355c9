package io.github.grpcretry.sample.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.testing.LoopbackOnly;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The sample as a user starts it: the showcase's figures and the backend (port) of each attempt of a retried call,
 * its Feed stream resumed whole, Actuator answering on the web port (health, the feed channel's resumption and the
 * Prometheus scrape), and both ports on loopback only.
 */
class ShowcaseTest {

    @Test
    void bothRetryingChannelsShowTheSameFiguresAndActuatorAnswers() throws Exception {
        int grpcPort;
        try (ServerSocket s = new ServerSocket(0)) {
            grpcPort = s.getLocalPort();
        }
        try (ConfigurableApplicationContext ctx = SpringApplication.run(SpringGrpcSampleApplication.class,
                "--server.port=0", "--spring.grpc.server.port=" + grpcPort)) {
            Showcase showcase = ctx.getBean(Showcase.class);
            assertThat(showcase.rows()).extracting(Showcase.Row::channel)
                    .containsExactly("no-retry", "via-properties", "via-boot");
            assertThat(showcase.rows().get(0)).isEqualTo(new Showcase.Row("no-retry", 15, 20, 0.0, null));
            assertThat(showcase.rows().get(1)).isEqualTo(new Showcase.Row("via-properties", 20, 25, 5.0, 6.7));
            assertThat(showcase.rows().get(2)).isEqualTo(new Showcase.Row("via-boot", 20, 25, 5.0, 6.7));
            // the Feed stream the server broke twice: the FeedResumption bean resumed it, all 30 items once in order
            assertThat(showcase.feed().complete(Showcase.FEED_ITEMS)).as(showcase.feed().text()).isTrue();
            assertThat(showcase.feed().attempts()).isEqualTo(3);
            assertThat(showcase.expected()).isTrue();
            // each retried call's attempts and the backend each reached: the sample's one backend, its gRPC server
            String twoAttempts = "attempt 1 UNAVAILABLE :" + grpcPort + " | attempt 2 OK :" + grpcPort;
            assertThat(showcase.lastRetried("via-properties")).isEqualTo(twoAttempts);
            assertThat(showcase.lastRetried("via-boot")).isEqualTo(twoAttempts);
            assertThat(showcase.lastRetried("no-retry")).isNull();

            int port = ((WebServerApplicationContext) ctx).getWebServer().getPort();
            HttpResponse<String> health = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/actuator/health/grpcRetry")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
            assertThat(health.body()).contains("\"via-boot\"", "\"tokens\":6.7");

            HttpResponse<String> feed = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/actuator/grpcretry/feed")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(feed.statusCode()).isEqualTo(200);
            assertThat(feed.body()).contains("\"streamResumptions\":{\"sample.flaky.Flaky/Feed\":"
                    + "\"io.github.grpcretry.sample.lab.FeedResumption\"}");

            HttpResponse<String> scrape = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/actuator/prometheus")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(scrape.statusCode()).isEqualTo(200);
            assertThat(scrape.body()).contains("grpc_client_retry_attempts_total{", "client=\"via-boot\"");

            // web and gRPC ports on loopback only: every socket listening on them has a loopback address
            if (LoopbackOnly.canTell()) {
                for (int p : new int[] {port, grpcPort}) {
                    assertThat(LoopbackOnly.listeningAddresses(p)).as("listening sockets of port " + p)
                            .isNotEmpty().allMatch(LoopbackOnly::isLoopback);
                }
            }
        }
    }
}
