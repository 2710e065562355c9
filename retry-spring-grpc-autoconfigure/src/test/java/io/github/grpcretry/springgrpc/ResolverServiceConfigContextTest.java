package io.github.grpcretry.springgrpc;

import static io.github.grpcretry.springgrpc.testing.GrpcClientContext.request;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.fail;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.integration.RetryReport;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.springgrpc.testing.GrpcServerContext;
import io.github.grpcretry.springgrpc.testing.ScriptedService;
import io.github.grpcretry.testing.ServiceConfigResolverProvider;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * A name resolver that supplies its own service config (a retry policy of 5 attempts) to a channel whose
 * grpc.retry entry asks for 3: on both engines a failing call reaches the server exactly 3 times (not
 * 3 × 5 on the interceptor engine, not 5 on the native one), one WARN per channel names the channel and
 * the resolver's policy, and the endpoint shows where the policy came from.
 */
@ExtendWith(OutputCaptureExtension.class)
class ResolverServiceConfigContextTest {

    static ScriptedService service;
    static GrpcServerContext server;
    static ServiceConfigResolverProvider resolver;

    @BeforeAll
    static void start() {
        service = new ScriptedService((key, n) -> fail(Status.Code.UNAVAILABLE));
        server = GrpcServerContext.start(service);
        resolver = ServiceConfigResolverProvider.register("svcconfig-boot4", server.port(),
                ServiceConfigResolverProvider.retryPolicy(SimpleServiceGrpc.SERVICE_NAME, 5));
    }

    @AfterAll
    static void stop() {
        resolver.close();
        server.close();
    }

    static String[] properties(String engine) {
        String m = "grpc.retry.clients.svc.service-config.method[0].";
        return new String[] {"grpc.retry.engine=" + engine,
            "spring.grpc.client.channel.svc.target=" + resolver.target(),
            m + "name[0].service=" + SimpleServiceGrpc.SERVICE_NAME,
            m + "retry.max-attempts=3", m + "retry.initial-backoff=1ms", m + "retry.max-backoff=2ms",
            m + "retry.backoff-multiplier=2", m + "retry.retryable-status-codes=UNAVAILABLE"};
    }

    @ParameterizedTest
    @ValueSource(strings = {"interceptor", "native"})
    void exactlyTheConfiguredAttemptsReachTheServer(String engine, CapturedOutput output) {
        try (GrpcClientContext client = GrpcClientContext.start(properties(engine))) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = client.stub("svc");
            for (int call = 0; call < 3; call++) {
                String key = "resolver-" + engine + "-" + call;
                StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                        () -> stub.unaryRpc(request(key)));
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(service.count(key)).as("arrivals of call %d on the %s engine", call, engine).isEqualTo(3);
                // One call's attempts, numbered once (no header, 1, 2): grpc-java did not retry inside an attempt.
                assertThat(service.arrivals(key)).extracting(ScriptedService.Arrival::previousAttempts)
                        .containsExactly(null, "1", "2");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> policy = (Map<String, Object>) client.bean(RetryReport.class).endpoint("svc").get("policy");
            assertThat(policy.get("sources")).isEqualTo(List.of("yaml"));
            @SuppressWarnings("unchecked")
            Map<String, Object> fromResolver = (Map<String, Object>) policy.get("resolverServiceConfig");
            assertThat((String) fromResolver.get("supplied")).contains("retryPolicy", "maxAttempts=5.0");
            assertThat((String) fromResolver.get("outcome"))
                    .startsWith(engine.equals("native") ? "merged: " : "dropped: ");
        }
        String console = output.getOut() + output.getErr();
        assertThat(console.split("Channel svc: its name resolver supplied a service config with retryPolicy", -1))
                .as("one WARN per channel, not per call").hasSize(2);
    }
}
