package io.github.grpcretry.autoconfigure.observation;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.github.grpcretry.attempt.AttemptObserver;
import io.github.grpcretry.autoconfigure.GrpcRetryAutoConfiguration;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import net.devh.boot.grpc.client.autoconfigure.GrpcClientMicrometerTraceAutoConfiguration;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

/**
 * {@code grpc.retry.observation.enabled} on the Spring Boot 3.5 line: with an ObservationRegistry the
 * attempts of a retried call are observations (default), with the property false or without a registry
 * they are not; the property is in the configuration metadata.
 */
class GrpcRetryObservationAutoConfigurationTest {

    private static final String M = "grpc.retry.clients.inventory.service-config.method[0].";

    private ScriptedServer server;

    /** Records the names of the observations started. */
    static final class Names implements ObservationHandler<Observation.Context> {
        final List<String> started = new CopyOnWriteArrayList<>();

        @Override
        public void onStart(Observation.Context context) {
            started.add(context.getName());
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }
    }

    @BeforeEach
    void start() throws Exception {
        server = ScriptedServer.start("observation-switch-" + UUID.randomUUID())
                .script(ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE));
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private ApplicationContextRunner runner(boolean registry) {
        ApplicationContextRunner runner = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(GrpcClientAutoConfiguration.class, GrpcRetryAutoConfiguration.class));
        if (registry) {
            runner = runner.withConfiguration(AutoConfigurations.of(ObservationAutoConfiguration.class,
                    GrpcClientMicrometerTraceAutoConfiguration.class));
        }
        return runner
                .withBean(Names.class, Names::new)
                .withPropertyValues("grpc.client.inventory.address=in-process:" + server.inProcessName(),
                        M + "name[0].service=grpc.testing.SimpleService", M + "retry.max-attempts=3",
                        M + "retry.initial-backoff=10ms", M + "retry.max-backoff=50ms", M + "retry.backoff-multiplier=2",
                        M + "retry.retryable-status-codes=unavailable");
    }

    private static void call(ApplicationContext ctx) {
        SimpleServiceGrpc.newBlockingStub(ctx.getBean(GrpcChannelFactory.class).createChannel("inventory"))
                .withDeadlineAfter(30, TimeUnit.SECONDS).unaryRpc(SimpleRequest.getDefaultInstance());
    }

    @Test
    void onByDefaultWithAnObservationRegistry() {
        runner(true).run(ctx -> {
            assertThat(ctx).hasSingleBean(AttemptObserver.class);
            call(ctx);
            assertThat(ctx.getBean(Names.class).started).containsExactly("grpc.client", "grpc.client.attempt",
                    "grpc.client.attempt");
        });
    }

    @Test
    void offWithThePropertyFalse() {
        runner(true).withPropertyValues("grpc.retry.observation.enabled=false").run(ctx -> {
            assertThat(ctx).doesNotHaveBean(AttemptObserver.class);
            call(ctx);
            assertThat(ctx.getBean(Names.class).started).containsExactly("grpc.client");
            assertThat(server.arrivalCount()).isEqualTo(2);
        });
    }

    @Test
    void offWithoutAnObservationRegistry() {
        runner(false).run(ctx -> {
            assertThat(ctx).doesNotHaveBean(AttemptObserver.class);
            call(ctx);
            assertThat(server.arrivalCount()).isEqualTo(2);
        });
    }

    @Test
    void thePropertyIsInTheConfigurationMetadata() throws Exception {
        JsonObject root;
        try (Reader r = new InputStreamReader(getClass().getClassLoader()
                .getResourceAsStream("META-INF/spring-configuration-metadata.json"), StandardCharsets.UTF_8)) {
            root = JsonParser.parseReader(r).getAsJsonObject();
        }
        JsonObject p = null;
        for (JsonElement e : root.getAsJsonArray("properties")) {
            if (e.getAsJsonObject().get("name").getAsString().equals("grpc.retry.observation.enabled")) {
                p = e.getAsJsonObject();
            }
        }
        assertThat(p).as("grpc.retry.observation.enabled").isNotNull();
        assertThat(p.get("description").getAsString()).contains("ObservationRegistry");
        assertThat(p.get("defaultValue").getAsBoolean()).isTrue();
    }
}
