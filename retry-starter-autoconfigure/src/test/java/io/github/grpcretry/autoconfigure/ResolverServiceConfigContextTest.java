package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.spring.reload.PolicySources;
import io.github.grpcretry.spring.reload.ReloadableChannels;
import io.github.grpcretry.testing.CountingEvents;
import io.github.grpcretry.testing.RefusingHttp2Server;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ServiceConfigResolverProvider;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.List;
import java.util.Map;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;

/**
 * A name resolver that supplies its own service config (a retry policy of 5 attempts for the whole service) to a
 * net.devh channel, on both engines, against a server that always answers UNAVAILABLE (attempts counted at the
 * server): without a grpc.retry entry the resolver's policy runs (5 arrivals, as without the starter), from the
 * channel's first call on; a grpc.retry entry wins for the names it configures and the resolver's policy runs for
 * the others; a new service config from the resolver is followed by the next calls, and the policy report shows
 * it. One WARN per channel names the channel and the resolver's policy. With the interceptor engine a stream the
 * server refuses is still retried transparently by grpc-java.
 */
@ExtendWith(OutputCaptureExtension.class)
class ResolverServiceConfigContextTest {

    private static final String M = "grpc.retry.clients.svc.service-config.method[0].";

    static String[] properties(String engine, String target) {
        return new String[] {"grpc.retry.engine=" + engine, "grpc.client.svc.address=" + target,
            "grpc.client.svc.negotiation-type=plaintext",
            M + "name[0].service=" + SimpleServiceGrpc.SERVICE_NAME,
            M + "retry.max-attempts=3", M + "retry.initial-backoff=1ms", M + "retry.max-backoff=2ms",
            M + "retry.backoff-multiplier=2", M + "retry.retryable-status-codes=UNAVAILABLE"};
    }

    /** The channel's transport settings only: no grpc.retry entry. */
    static String[] withoutEntry(String engine, String target) {
        return new String[] {"grpc.retry.engine=" + engine, "grpc.client.svc.address=" + target,
            "grpc.client.svc.negotiation-type=plaintext"};
    }

    static SimpleServiceGrpc.SimpleServiceBlockingStub stub(ApplicationContext ctx) {
        return SimpleServiceGrpc.newBlockingStub(ctx.getBean(GrpcChannelFactory.class).createChannel("svc"));
    }

    /** Runs one failing unary call and returns how many attempts reached the server. */
    static int unaryArrivals(ScriptedServer server, SimpleServiceGrpc.SimpleServiceBlockingStub stub) {
        server.reset();
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                () -> stub.unaryRpc(SimpleRequest.getDefaultInstance()));
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        return server.arrivalCount();
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> fromResolver(ApplicationContext ctx) {
        return (Map<String, Object>) ctx.getBean(PolicySources.class).report("svc").get("resolverServiceConfig");
    }

    @ParameterizedTest
    @ValueSource(strings = {"interceptor", "native"})
    void theChannelsEntryWinsForTheNamesItConfigures(String engine, CapturedOutput output) throws Exception {
        try (ScriptedServer server = ScriptedServer.startNetty();
                ServiceConfigResolverProvider resolver = ServiceConfigResolverProvider.register("svcconfig-boot3-" + engine,
                        server.port(), ServiceConfigResolverProvider.retryPolicy(SimpleServiceGrpc.SERVICE_NAME, 5))) {
            server.script(a -> ScriptedServer.Action.fail(Status.Code.UNAVAILABLE));
            RetryTestContexts.runner().withPropertyValues(properties(engine, resolver.target())).run(ctx -> {
                assertThat(ctx).hasNotFailed();
                SimpleServiceGrpc.SimpleServiceBlockingStub stub = stub(ctx);
                for (int call = 0; call < 3; call++) {
                    assertThat(unaryArrivals(server, stub)).as("arrivals of call %d on the %s engine", call, engine)
                            .isEqualTo(3);
                    assertThat(server.arrivals()).extracting(a -> a.previousAttempts).containsExactly(null, 1, 2);
                }
                Map<String, Object> policy = ctx.getBean(PolicySources.class).report("svc");
                assertThat(policy.get("sources")).isEqualTo(List.of("yaml"));
                assertThat((String) fromResolver(ctx).get("supplied")).contains("retryPolicy", "maxAttempts=5.0");
                assertThat((String) fromResolver(ctx).get("outcome"))
                        .startsWith(engine.equals("native") ? "merged: " : "not run: ");
            });
        }
        String console = output.getOut() + output.getErr();
        assertThat(console.split("Channel svc: its name resolver supplied a service config with retryPolicy", -1))
                .as("one WARN per channel, not per call").hasSize(2);
    }

    @ParameterizedTest
    @ValueSource(strings = {"interceptor", "native"})
    void withoutAnEntryTheResolversPolicyRunsFromTheFirstCallOn(String engine) throws Exception {
        try (ScriptedServer server = ScriptedServer.startNetty();
                ServiceConfigResolverProvider resolver = ServiceConfigResolverProvider.register("svcconfig-boot3-own-" + engine,
                        server.port(), ServiceConfigResolverProvider.retryPolicy(SimpleServiceGrpc.SERVICE_NAME, 5))) {
            server.script(a -> ScriptedServer.Action.fail(Status.Code.UNAVAILABLE));
            CountingEvents events = new CountingEvents();
            RetryTestContexts.runner().withBean(RetryEventListener.class, () -> events)
                    .withPropertyValues(withoutEntry(engine, resolver.target())).run(ctx -> {
                        assertThat(ctx).hasNotFailed();
                        SimpleServiceGrpc.SimpleServiceBlockingStub stub = stub(ctx);
                        for (int call = 0; call < 3; call++) {
                            assertThat(unaryArrivals(server, stub)).as("arrivals of call %d on the %s engine", call, engine)
                                    .isEqualTo(5);
                            assertThat(server.arrivals()).extracting(a -> a.previousAttempts)
                                    .containsExactly(null, 1, 2, 3, 4);
                        }
                        // The engine's attempts reach the listeners (meters, events) as any policy's do; a native
                        // channel without settings of its own gets no attempt tracer (docs/spring-boot-4.md).
                        assertThat(events.attemptsStarted.get()).isEqualTo(engine.equals("interceptor") ? 15 : 0);
                        assertThat(ctx.getBean(PolicySources.class).report("svc").get("sources"))
                                .isEqualTo(List.of("resolver"));
                        assertThat((String) fromResolver(ctx).get("outcome"))
                                .startsWith(engine.equals("native") ? "used: " : "run by the engine: ");
                    });
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"interceptor", "native"})
    void theResolversPolicyRunsForTheMethodsTheEntryDoesNotName(String engine) throws Exception {
        try (ScriptedServer server = ScriptedServer.startNetty();
                ServiceConfigResolverProvider resolver = ServiceConfigResolverProvider.register("svcconfig-boot3-other-" + engine,
                        server.port(), ServiceConfigResolverProvider.retryPolicy(SimpleServiceGrpc.SERVICE_NAME, 5))) {
            server.script(a -> ScriptedServer.Action.fail(Status.Code.UNAVAILABLE));
            List<String> props = new java.util.ArrayList<>(List.of(properties(engine, resolver.target())));
            props.add(M + "name[0].method=UnaryRpc");
            RetryTestContexts.runner().withPropertyValues(props.toArray(String[]::new)).run(ctx -> {
                assertThat(ctx).hasNotFailed();
                SimpleServiceGrpc.SimpleServiceBlockingStub stub = stub(ctx);
                assertThat(unaryArrivals(server, stub)).as("UnaryRpc: the entry's 3").isEqualTo(3);
                server.reset();
                StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                        () -> stub.serverStreamingRpc(SimpleRequest.getDefaultInstance()).hasNext());
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(server.arrivalCount()).as("ServerStreamingRpc: the resolver's 5").isEqualTo(5);
                assertThat(ctx.getBean(PolicySources.class).report("svc").get("sources"))
                        .isEqualTo(List.of("yaml", "resolver"));
            });
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"interceptor", "native"})
    void aNewServiceConfigFromTheResolverIsFollowed(String engine) throws Exception {
        try (ScriptedServer server = ScriptedServer.startNetty();
                ServiceConfigResolverProvider resolver = ServiceConfigResolverProvider.register("svcconfig-boot3-new-" + engine,
                        server.port(), ServiceConfigResolverProvider.retryPolicy(SimpleServiceGrpc.SERVICE_NAME, 5))) {
            server.script(a -> ScriptedServer.Action.fail(Status.Code.UNAVAILABLE));
            RetryTestContexts.runner().withPropertyValues(withoutEntry(engine, resolver.target())).run(ctx -> {
                assertThat(ctx).hasNotFailed();
                SimpleServiceGrpc.SimpleServiceBlockingStub stub = stub(ctx);
                assertThat(unaryArrivals(server, stub)).isEqualTo(5);
                assertThat((String) fromResolver(ctx).get("supplied")).contains("maxAttempts=5.0");

                resolver.update(ServiceConfigResolverProvider.retryPolicy(SimpleServiceGrpc.SERVICE_NAME, 2));
                assertThat(unaryArrivals(server, stub)).as("after the resolver's new config").isEqualTo(2);
                assertThat((String) fromResolver(ctx).get("supplied")).contains("maxAttempts=2.0");
                assertThat(ctx.getBean(PolicySources.class).report("svc").get("sources")).isEqualTo(List.of("resolver"));
                if (engine.equals("interceptor")) {
                    assertThat(ctx.getBean(ReloadableChannels.class).forChannel("svc").serviceConfig()
                            .find(SimpleServiceGrpc.getUnaryRpcMethod()).retryPolicy().maxAttempts())
                            .as("what the engine runs").isEqualTo(2);
                }

                resolver.update(null);
                assertThat(unaryArrivals(server, stub)).as("after an answer without a service config").isEqualTo(1);
                assertThat(ctx.getBean(PolicySources.class).report("svc").get("sources")).isEqualTo(List.of());
                assertThat((String) fromResolver(ctx).get("outcome")).startsWith("its latest answer has no service config");
            });
        }
    }

    @Test
    void aRefusedStreamIsRetriedTransparentlyUnderTheEnginesAttempts() throws Exception {
        try (RefusingHttp2Server server = new RefusingHttp2Server();
                ServiceConfigResolverProvider resolver = ServiceConfigResolverProvider.register("svcconfig-boot3-transparent",
                        Integer.parseInt(server.target().substring(server.target().lastIndexOf(':') + 1)),
                        ServiceConfigResolverProvider.retryPolicy(SimpleServiceGrpc.SERVICE_NAME, 5))) {
            server.script(n -> n == 1 ? new RefusingHttp2Server.Refuse() : new RefusingHttp2Server.Fail(Status.Code.UNAVAILABLE));
            CountingEvents events = new CountingEvents();
            RetryTestContexts.runner().withBean(RetryEventListener.class, () -> events)
                    .withPropertyValues(properties("interceptor", resolver.target())).run(ctx -> {
                        assertThat(ctx).hasNotFailed();
                        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                                () -> stub(ctx).unaryRpc(SimpleRequest.getDefaultInstance()));
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                        // Stream 1 refused and re-sent transparently (stream 2) within the engine's attempt 1;
                        // attempts 2 and 3 are streams 3 and 4 (with disableRetry() it would be 3 streams, with
                        // grpc-java retrying too, 15).
                        assertThat(server.streams()).isEqualTo(4);
                        assertThat(events.attemptsStarted.get()).isEqualTo(3);
                    });
        }
    }
}
