package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.spring.testing.ConfigurationEdgesContract;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import net.devh.boot.grpc.client.inject.GrpcClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.env.StandardEnvironment;

/**
 * Configuration at its edges on Spring Boot 3.5 (net.devh): the cases of
 * {@link ConfigurationEdgesContract}, each a real context with net.devh's client auto-configuration and an
 * in-process scripted server that fails every call with UNAVAILABLE.
 */
class ConfigurationEdgesContextTest extends ConfigurationEdgesContract {

    @SpringBootConfiguration
    @ImportAutoConfiguration({GrpcClientAutoConfiguration.class, GrpcRetryAutoConfiguration.class})
    static class App {
    }

    /** A client of the channel {@code global}, injected while the application starts. */
    static class GlobalClient {
        @GrpcClient("global")
        SimpleServiceGrpc.SimpleServiceBlockingStub stub;
    }

    static ScriptedServer server;
    static String serverName;

    @BeforeAll
    static void startServer() throws Exception {
        serverName = "edges-" + UUID.randomUUID();
        server = ScriptedServer.start(serverName).script(a -> ScriptedServer.Action.fail(Status.Code.UNAVAILABLE));
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    static ConfigurableApplicationContext start(List<String> properties, Map<String, Object> environment,
            boolean globalChannel) {
        List<String> p = new ArrayList<>(List.of("spring.main.banner-mode=off"));
        p.addAll(properties);
        return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                .initializers(c -> {
                    c.getEnvironment().getPropertySources().addBefore(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                            new UnknownKeysContextTest.EnvironmentVariables(environment));
                    if (globalChannel) {
                        ((GenericApplicationContext) c).registerBean(GlobalClient.class);
                    }
                })
                .properties(p.toArray(String[]::new)).run();
    }

    @Override
    protected String channelProperty(String channel) {
        return "grpc.client." + channel + ".address=in-process:" + serverName;
    }

    @Override
    protected int arrivals(List<String> properties, Map<String, Object> environment, String channel) {
        try (ConfigurableApplicationContext ctx = start(properties, environment, false)) {
            server.reset();
            StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                    () -> SimpleServiceGrpc.newBlockingStub(ctx.getBean(GrpcChannelFactory.class).createChannel(channel))
                            .unaryRpc(SimpleRequest.getDefaultInstance()));
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            return server.arrivalCount();
        }
    }

    @Override
    protected Throwable failure(List<String> properties, Map<String, Object> environment, boolean globalChannel) {
        Throwable failure = catchThrowable(() -> start(properties, environment, globalChannel).close());
        assertThat(failure).as("start-up fails").isNotNull();
        return failure;
    }

    @Override
    protected String report(Throwable failure) {
        return RetryTestContexts.failureReport(failure);
    }
}
