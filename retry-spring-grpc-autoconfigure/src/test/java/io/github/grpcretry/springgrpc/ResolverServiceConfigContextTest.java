package io.github.grpcretry.springgrpc;

import static io.github.grpcretry.springgrpc.testing.GrpcClientContext.request;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.fail;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.spring.report.RetryReport;
import io.github.grpcretry.spring.report.RetryStatistics;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.springgrpc.testing.GrpcServerContext;
import io.github.grpcretry.springgrpc.testing.ScriptedService;
import io.github.grpcretry.testing.ServiceConfigResolverProvider;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * A name resolver that supplies its own service config (a retry policy of 5 attempts for the whole service) to
 * a Spring gRPC channel, on both engines, against a server that always answers UNAVAILABLE (attempts counted at
 * the server): a grpc.retry entry wins for the names it configures (3, not 3 × 5 nor 5), and the resolver's
 * policy runs for the names it does not (5, as without the starter), from the channel's first call on; a
 * new service config from the resolver is followed by the next calls, and the endpoint shows it. One WARN per
 * channel names the channel and the resolver's policy.
 */
@ExtendWith(OutputCaptureExtension.class)
class ResolverServiceConfigContextTest {

    private static final String M = "grpc.retry.clients.svc.service-config.method[0].";

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

    static String[] properties(String engine, String target) {
        return new String[] {"grpc.retry.engine=" + engine,
            "spring.grpc.client.channel.svc.target=" + target,
            M + "name[0].service=" + SimpleServiceGrpc.SERVICE_NAME,
            M + "retry.max-attempts=3", M + "retry.initial-backoff=1ms", M + "retry.max-backoff=2ms",
            M + "retry.backoff-multiplier=2", M + "retry.retryable-status-codes=UNAVAILABLE"};
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> policy(GrpcClientContext client) {
        return (Map<String, Object>) client.bean(RetryReport.class).endpoint("svc").get("policy");
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> fromResolver(GrpcClientContext client) {
        return (Map<String, Object>) policy(client).get("resolverServiceConfig");
    }

    /** Runs one failing unary call with {@code key} and returns how many attempts reached the server. */
    static int unaryArrivals(SimpleServiceGrpc.SimpleServiceBlockingStub stub, String key) {
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, () -> stub.unaryRpc(request(key)));
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        return service.count(key);
    }

    /** The scripted service that also fails every server-streaming call with UNAVAILABLE, counting them. */
    static final class WithStreaming extends ScriptedService {
        final AtomicInteger streaming = new AtomicInteger();

        WithStreaming() {
            super((key, n) -> fail(Status.Code.UNAVAILABLE));
        }

        @Override
        public void serverStreamingRpc(SimpleRequest request, StreamObserver<SimpleResponse> observer) {
            streaming.incrementAndGet();
            observer.onError(Status.UNAVAILABLE.withDescription("scripted").asRuntimeException());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"interceptor", "native"})
    void theChannelsEntryWinsForTheNamesItConfigures(String engine, CapturedOutput output) {
        try (GrpcClientContext client = GrpcClientContext.start(properties(engine, resolver.target()))) {
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
            assertThat(policy(client).get("sources")).isEqualTo(List.of("yaml"));
            assertThat((String) fromResolver(client).get("supplied")).contains("retryPolicy", "maxAttempts=5.0");
            assertThat((String) fromResolver(client).get("outcome"))
                    .startsWith(engine.equals("native") ? "merged: " : "not run: ");
        }
        String console = output.getOut() + output.getErr();
        assertThat(console.split("Channel svc: its name resolver supplied a service config with retryPolicy", -1))
                .as("one WARN per channel, not per call").hasSize(2);
    }

    @ParameterizedTest
    @ValueSource(strings = {"interceptor", "native"})
    void withoutAnEntryTheResolversPolicyRunsFromTheFirstCallOn(String engine) {
        try (ServiceConfigResolverProvider own = ServiceConfigResolverProvider.register("svcconfig-boot4-own-" + engine,
                        server.port(), ServiceConfigResolverProvider.retryPolicy(SimpleServiceGrpc.SERVICE_NAME, 5));
                GrpcClientContext client = GrpcClientContext.start("grpc.retry.engine=" + engine,
                        "spring.grpc.client.channel.svc.target=" + own.target())) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = client.stub("svc");
            for (int call = 0; call < 3; call++) {
                String key = "own-" + engine + "-" + call;
                assertThat(unaryArrivals(stub, key)).as("arrivals of call %d on the %s engine", call, engine).isEqualTo(5);
                assertThat(service.arrivals(key)).extracting(ScriptedService.Arrival::previousAttempts)
                        .containsExactly(null, "1", "2", "3", "4");
            }
            assertThat(policy(client).get("sources")).isEqualTo(List.of("resolver"));
            assertThat((String) fromResolver(client).get("outcome"))
                    .startsWith(engine.equals("native") ? "used: " : "run by the engine: ");
            if (engine.equals("interceptor")) {
                // the engine's attempts are counted as any policy's are (the endpoint's counts, the meters)
                assertThat(client.bean(RetryStatistics.class).counts("svc").attempts()).isEqualTo(15);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"interceptor", "native"})
    void theResolversPolicyRunsForTheMethodsTheEntryDoesNotName(String engine) {
        WithStreaming streaming = new WithStreaming();
        try (GrpcServerContext streamingServer = GrpcServerContext.start(streaming);
                ServiceConfigResolverProvider other = ServiceConfigResolverProvider.register(
                        "svcconfig-boot4-other-" + engine, streamingServer.port(),
                        ServiceConfigResolverProvider.retryPolicy(SimpleServiceGrpc.SERVICE_NAME, 5))) {
            List<String> props = new ArrayList<>(List.of(properties(engine, other.target())));
            props.add(M + "name[0].method=UnaryRpc");
            try (GrpcClientContext client = GrpcClientContext.start(props.toArray(String[]::new))) {
                SimpleServiceGrpc.SimpleServiceBlockingStub stub = client.stub("svc");
                StatusRuntimeException unary = catchThrowableOfType(StatusRuntimeException.class,
                        () -> stub.unaryRpc(request("other-" + engine)));
                assertThat(unary.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(streaming.count("other-" + engine)).as("UnaryRpc: the entry's 3").isEqualTo(3);
                StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                        () -> stub.serverStreamingRpc(SimpleRequest.getDefaultInstance()).hasNext());
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(streaming.streaming.get()).as("ServerStreamingRpc: the resolver's 5").isEqualTo(5);
                assertThat(policy(client).get("sources")).isEqualTo(List.of("yaml", "resolver"));
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"interceptor", "native"})
    @SuppressWarnings("unchecked")
    void aNewServiceConfigFromTheResolverIsFollowed(String engine) throws Exception {
        try (ServiceConfigResolverProvider changing = ServiceConfigResolverProvider.register(
                        "svcconfig-boot4-new-" + engine, server.port(),
                        ServiceConfigResolverProvider.retryPolicy(SimpleServiceGrpc.SERVICE_NAME, 5));
                GrpcClientContext client = GrpcClientContext.start("grpc.retry.engine=" + engine,
                        "spring.grpc.client.channel.svc.target=" + changing.target())) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = client.stub("svc");
            assertThat(unaryArrivals(stub, "new-" + engine + "-before")).isEqualTo(5);
            assertThat((String) fromResolver(client).get("supplied")).contains("maxAttempts=5.0");

            changing.update(ServiceConfigResolverProvider.retryPolicy(SimpleServiceGrpc.SERVICE_NAME, 2));
            assertThat(unaryArrivals(stub, "new-" + engine + "-after")).as("after the resolver's new config").isEqualTo(2);
            assertThat((String) fromResolver(client).get("supplied")).contains("maxAttempts=2.0");
            assertThat(policy(client).get("sources")).isEqualTo(List.of("resolver"));
            if (engine.equals("interceptor")) {
                Map<String, Object> config = (Map<String, Object>) client.bean(RetryReport.class).endpoint("svc")
                        .get("config");
                List<Map<String, Object>> methods = (List<Map<String, Object>>) config.get("methods");
                assertThat(methods).as("what the engine runs").singleElement()
                        .satisfies(m -> assertThat(((Map<String, Object>) m.get("retry")).get("maxAttempts")).isEqualTo(2));
            }
        }
    }
}
