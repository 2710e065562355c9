package io.github.grpcretry.springgrpc;

import static io.github.grpcretry.springgrpc.testing.GrpcClientContext.request;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.fail;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.ok;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.springgrpc.testing.GrpcServerContext;
import io.github.grpcretry.springgrpc.testing.HangingListener;
import io.github.grpcretry.springgrpc.testing.ScriptedService;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.grpc.client.GrpcChannelFactory;

/**
 * What the engine does on a Netty transport Spring gRPC picked for the channels: grpc-netty (Spring Boot's
 * client starter brings it; {@link GrpcNettyTransportTest}) or grpc-java's shaded Netty (when the
 * application has it, Spring Boot prefers it; {@link ShadedNettyTransportTest}, run in a surefire execution of
 * its own that has the shaded jar). Real Spring Boot 4.1 client and server applications on loopback.
 */
abstract class NettyTransportContract {

    static final String M = ".service-config.method[0].";

    static ScriptedService service;
    static GrpcServerContext server;

    /** The simple name of the Spring gRPC channel factory this transport's channels come from. */
    abstract String channelFactory();

    /** The simple name of the other Netty's channel factory, which must not be there. */
    abstract String otherChannelFactory();

    @BeforeAll
    static void startServer() {
        service = new ScriptedService((key, n) -> key.startsWith("first2") && n < 2 ? fail(Status.Code.UNAVAILABLE) : ok());
        server = GrpcServerContext.start(service);
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void theChannelsComeFromThisNettyAndTheEngineRetriesOnThem() {
        String p = "grpc.retry.clients.netty" + M;
        try (GrpcClientContext client = GrpcClientContext.start(
                "spring.grpc.client.channel.netty.target=" + server.nettyTarget(),
                p + "retry.max-attempts=3", p + "retry.initial-backoff=5ms", p + "retry.max-backoff=20ms",
                p + "retry.backoff-multiplier=2", p + "retry.retryable-status-codes=UNAVAILABLE")) {
            // the factory beans are JDK proxies (SpringGrpcChannelStates): their classes are those of their definitions
            var beans = client.context().getBeanFactory();
            List<String> factories = List.of(beans.getBeanNamesForType(GrpcChannelFactory.class)).stream()
                    .map(name -> beans.getMergedBeanDefinition(name).getResolvableType().toClass().getSimpleName())
                    .toList();
            assertThat(factories).contains(channelFactory()).doesNotContain(otherChannelFactory());
            client.stub("netty").withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(request("first2"));
            assertThat(service.count("first2")).isEqualTo(3);
            assertThat(service.arrivals("first2")).extracting(ScriptedService.Arrival::previousAttempts)
                    .containsExactly(null, "1", "2");
        }
    }

    /**
     * {@code connect-timeout} reaches this Netty's builder: a connect that the peer never answers ends after
     * the configured 300 ms (Netty names the timeout in its exception), while a channel without it is still
     * connecting when its call's 1 s deadline passes (Netty's own default is 30 s).
     */
    @Test
    void connectTimeoutEndsAConnectThatNeverCompletes() throws Exception {
        try (HangingListener hanging = HangingListener.start();
             GrpcClientContext client = GrpcClientContext.start(
                     "spring.grpc.client.channel.bounded.target=" + hanging.target(),
                     "grpc.retry.clients.bounded.connect-timeout=300ms",
                     "spring.grpc.client.channel.unbounded.target=" + hanging.target())) {
            StatusRuntimeException bounded = catchThrowableOfType(StatusRuntimeException.class, () -> client.stub("bounded")
                    .withDeadlineAfter(20, TimeUnit.SECONDS).unaryRpc(request("never")));
            assertThat(bounded.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(causes(bounded)).anyMatch(m -> m.contains("connection timed out after 300 ms"));

            StatusRuntimeException unbounded = catchThrowableOfType(StatusRuntimeException.class, () -> client
                    .stub("unbounded").withDeadlineAfter(1, TimeUnit.SECONDS).unaryRpc(request("never")));
            assertThat(unbounded.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        }
        assertThat(service.count("never")).isZero();
    }

    private static List<String> causes(Throwable t) {
        List<String> messages = new java.util.ArrayList<>();
        for (Throwable c = t; c != null; c = c.getCause()) {
            messages.add(String.valueOf(c.getMessage()));
        }
        return messages;
    }
}
