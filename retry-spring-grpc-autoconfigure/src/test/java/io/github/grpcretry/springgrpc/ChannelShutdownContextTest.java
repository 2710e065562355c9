package io.github.grpcretry.springgrpc;

import static io.github.grpcretry.springgrpc.testing.GrpcClientContext.request;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.fail;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.ok;
import static io.github.grpcretry.testing.ScheduledRetries.failsWithin;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.spring.reload.ReloadableChannels;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.springgrpc.testing.GrpcServerContext;
import io.github.grpcretry.springgrpc.testing.ScriptedService;
import io.github.grpcretry.testing.ScheduledRetries;
import io.github.grpcretry.testing.ServiceConfigResolverProvider;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The application's channel shut down while a call waits in a long backoff (Spring Boot 4.1, interceptor engine,
 * Netty on loopback): the engine knows the {@code ManagedChannel} Spring gRPC built, so the call ends at once
 * {@code UNAVAILABLE} "Channel shutdown invoked", long before its backoff (the server's pushback) runs out, and
 * the server sees no further attempt. Each channel of a name follows its own shut-down; an engine made later
 * (the resolver's new service config, seen running by its attempt count) follows it too; the channel factory's close at context shut-down ends
 * such a call as well.
 */
class ChannelShutdownContextTest {

    /** The server's pushback: the backoff each retry waits. */
    static final long BACKOFF_MS = 60_000;
    /** How long a call may take to end after the shut-down: half the backoff (it ends within milliseconds). */
    static final long WITHIN_MS = BACKOFF_MS / 2;

    static ScriptedService service;
    static GrpcServerContext server;

    @BeforeAll
    static void start() {
        service = new ScriptedService((key, n) -> key.startsWith("ok") ? ok()
                : key.startsWith("policy") ? fail(Status.Code.UNAVAILABLE)
                : fail(Status.Code.UNAVAILABLE, String.valueOf(BACKOFF_MS)));
        server = GrpcServerContext.start(service);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static String[] properties(String target) {
        String m = "grpc.retry.clients.svc.service-config.method[0].";
        return new String[] {"grpc.retry.engine=interceptor", "spring.grpc.client.channel.svc.target=" + target,
            m + "name[0].service=" + SimpleServiceGrpc.SERVICE_NAME, m + "retry.max-attempts=5",
            m + "retry.initial-backoff=1ms", m + "retry.max-backoff=2ms", m + "retry.backoff-multiplier=2",
            m + "retry.retryable-status-codes=UNAVAILABLE"};
    }

    static Future<SimpleResponse> call(ManagedChannel channel, String key) {
        return SimpleServiceGrpc.newFutureStub(channel).unaryRpc(request(key));
    }

    /** {@code call} fails at once with the channel's status, and {@code key} reached the server once only. */
    static void endsByTheShutdown(Future<SimpleResponse> call, String key) throws Exception {
        Status status = failsWithin(call, WITHIN_MS);
        assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(status.getDescription()).isEqualTo("Channel shutdown invoked");
        assertThat(service.count(key)).as("no attempt after the shut-down").isEqualTo(1);
    }

    @Test
    void shutdownNowEndsACallInBackoffAtOnceOnTheChannelShutDownOnly() throws Exception {
        ScheduledRetries scheduled = new ScheduledRetries();
        try (GrpcClientContext client = GrpcClientContext.start(List.of(scheduled), properties(server.nettyTarget()))) {
            // Spring gRPC builds a channel per stub: two channels of one name, one engine
            ManagedChannel first = client.channel("svc");
            ManagedChannel second = client.channel("svc");
            Future<SimpleResponse> onFirst = call(first, "first");
            scheduled.awaitBackoff(BACKOFF_MS, WITHIN_MS);
            Future<SimpleResponse> onSecond = call(second, "second");
            scheduled.awaitBackoff(BACKOFF_MS, WITHIN_MS);

            first.shutdownNow();
            endsByTheShutdown(onFirst, "first");
            assertThat(first.awaitTermination(WITHIN_MS, TimeUnit.MILLISECONDS)).isTrue();
            assertThat(onSecond).as("the other channel's call still waits for its retry").isNotDone();

            second.shutdownNow();
            endsByTheShutdown(onSecond, "second");
            assertThat(scheduled.noneLeft()).as("no retry scheduled after the shut-downs").isTrue();
        }
    }

    @Test
    void anEngineMadeFromTheResolversNewServiceConfigFollowsTheShutdownToo() throws Exception {
        ScheduledRetries scheduled = new ScheduledRetries();
        try (ServiceConfigResolverProvider resolver = ServiceConfigResolverProvider.register("shutdown-boot4",
                        server.port(), ServiceConfigResolverProvider.retryPolicy(SimpleServiceGrpc.SERVICE_NAME, 5));
                GrpcClientContext client = GrpcClientContext.start(List.of(scheduled), "grpc.retry.engine=interceptor",
                        "spring.grpc.client.channel.svc.target=" + resolver.target())) {
            ManagedChannel channel = client.channel("svc");
            call(channel, "ok-before").get(WITHIN_MS, TimeUnit.MILLISECONDS);
            resolver.update(ServiceConfigResolverProvider.retryPolicy(SimpleServiceGrpc.SERVICE_NAME, 4));
            // the new service config's engine runs the calls now: 4 attempts (its policy's ms backoffs), not 5
            assertThat(failsWithin(call(channel, "policy-after"), WITHIN_MS).getCode())
                    .isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(service.count("policy-after")).as("attempts under the new service config").isEqualTo(4);
            assertThat(scheduled.takeAll()).as("its retries").isEqualTo(3);

            Future<SimpleResponse> waiting = call(channel, "after-update");
            scheduled.awaitBackoff(BACKOFF_MS, WITHIN_MS);
            channel.shutdownNow();
            endsByTheShutdown(waiting, "after-update");
        }
    }

    @Test
    void theChannelFactorysCloseAtContextShutdownEndsACallInBackoffAtOnce() throws Exception {
        ScheduledRetries scheduled = new ScheduledRetries();
        Future<SimpleResponse> waiting;
        try (GrpcClientContext client = GrpcClientContext.start(List.of(scheduled), properties(server.nettyTarget()))) {
            waiting = call(client.channel("svc"), "context-close");
            scheduled.awaitBackoff(BACKOFF_MS, WITHIN_MS);
        }
        // the context closed: the channel factory shut its channels down (and the engine's scheduler closed)
        assertThat(failsWithin(waiting, WITHIN_MS).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(service.count("context-close")).as("no attempt after the shut-down").isEqualTo(1);
    }
}
