package io.github.grpcretry.springgrpc;

import static io.github.grpcretry.springgrpc.testing.GrpcClientContext.request;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.fail;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.ok;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.integration.ReloadableChannels;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.springgrpc.testing.GrpcServerContext;
import io.github.grpcretry.springgrpc.testing.ScriptedService;
import io.github.grpcretry.testing.ServiceConfigResolverProvider;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The application's channel shut down while a call waits in a long backoff (Spring Boot 4.1, interceptor engine,
 * Netty on loopback): the engine knows the {@code ManagedChannel} Spring gRPC built, so the call ends at once
 * {@code UNAVAILABLE} "Channel shutdown invoked", long before its backoff (the server's pushback) runs out, and
 * the server sees no further attempt. Each channel of a name follows its own shut-down; an engine made later
 * (the resolver's new service config) follows it too; the channel factory's close at context shut-down ends
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
                : fail(Status.Code.UNAVAILABLE, String.valueOf(BACKOFF_MS)));
        server = GrpcServerContext.start(service);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** The delay of every retry the engine schedules, as it reports it. */
    static final class Scheduled implements RetryEventListener {
        final LinkedBlockingQueue<Long> delays = new LinkedBlockingQueue<>();

        @Override
        public void retryScheduled(CallTarget target, int nextAttemptNumber, long delayNanos) {
            delays.add(delayNanos);
        }

        /** Waits for the next retry scheduled and checks it waits the server's pushback. */
        void awaitBackoff() throws InterruptedException {
            Long delay = delays.poll(WITHIN_MS, TimeUnit.MILLISECONDS);
            assertThat(delay).as("a retry scheduled").isNotNull();
            assertThat(delay).as("its backoff: the server's pushback").isEqualTo(TimeUnit.MILLISECONDS.toNanos(BACKOFF_MS));
        }
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

    /** The status {@code call} ended with, within {@link #WITHIN_MS} of now. */
    static Status endedWithin(Future<SimpleResponse> call) throws Exception {
        long start = System.nanoTime();
        try {
            call.get(WITHIN_MS, TimeUnit.MILLISECONDS);
            throw new AssertionError("the call succeeded");
        } catch (ExecutionException e) {
            assertThat(System.nanoTime() - start).isLessThan(TimeUnit.MILLISECONDS.toNanos(WITHIN_MS));
            return ((StatusRuntimeException) e.getCause()).getStatus();
        }
    }

    static RetryingClientInterceptor engine(GrpcClientContext client) {
        for (ClientInterceptor i : client.bean(ReloadableChannels.class).interceptorsOf("svc")) {
            if (i instanceof RetryingClientInterceptor r) {
                return r;
            }
        }
        throw new AssertionError("no engine on svc");
    }

    @Test
    void shutdownNowEndsACallInBackoffAtOnceOnTheChannelShutDownOnly() throws Exception {
        Scheduled scheduled = new Scheduled();
        try (GrpcClientContext client = GrpcClientContext.start(List.of(scheduled), properties(server.nettyTarget()))) {
            // Spring gRPC builds a channel per stub: two channels of one name, one engine
            ManagedChannel first = client.channel("svc");
            ManagedChannel second = client.channel("svc");
            Future<SimpleResponse> onFirst = call(first, "first");
            scheduled.awaitBackoff();
            Future<SimpleResponse> onSecond = call(second, "second");
            scheduled.awaitBackoff();

            first.shutdownNow();
            Status status = endedWithin(onFirst);
            assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(status.getDescription()).isEqualTo("Channel shutdown invoked");
            assertThat(service.count("first")).as("no attempt after the shut-down").isEqualTo(1);
            assertThat(first.awaitTermination(WITHIN_MS, TimeUnit.MILLISECONDS)).isTrue();
            assertThat(onSecond).as("the other channel's call still waits for its retry").isNotDone();

            second.shutdownNow();
            assertThat(endedWithin(onSecond).getDescription()).isEqualTo("Channel shutdown invoked");
            assertThat(service.count("second")).isEqualTo(1);
            assertThat(scheduled.delays).as("no retry scheduled after the shut-downs").isEmpty();
        }
    }

    @Test
    void anEngineMadeFromTheResolversNewServiceConfigFollowsTheShutdownToo() throws Exception {
        Scheduled scheduled = new Scheduled();
        try (ServiceConfigResolverProvider resolver = ServiceConfigResolverProvider.register("shutdown-boot4",
                        server.port(), ServiceConfigResolverProvider.retryPolicy(SimpleServiceGrpc.SERVICE_NAME, 5));
                GrpcClientContext client = GrpcClientContext.start(List.of(scheduled), "grpc.retry.engine=interceptor",
                        "spring.grpc.client.channel.svc.target=" + resolver.target())) {
            ManagedChannel channel = client.channel("svc");
            call(channel, "ok-before").get(WITHIN_MS, TimeUnit.MILLISECONDS);
            RetryingClientInterceptor before = engine(client);
            resolver.update(ServiceConfigResolverProvider.retryPolicy(SimpleServiceGrpc.SERVICE_NAME, 4));
            call(channel, "ok-after").get(WITHIN_MS, TimeUnit.MILLISECONDS);
            assertThat(engine(client)).as("a new engine for the new service config").isNotSameAs(before);

            Future<SimpleResponse> waiting = call(channel, "after-update");
            scheduled.awaitBackoff();
            channel.shutdownNow();
            Status status = endedWithin(waiting);
            assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(status.getDescription()).isEqualTo("Channel shutdown invoked");
            assertThat(service.count("after-update")).isEqualTo(1);
        }
    }

    @Test
    void theChannelFactorysCloseAtContextShutdownEndsACallInBackoffAtOnce() throws Exception {
        Scheduled scheduled = new Scheduled();
        Future<SimpleResponse> waiting;
        try (GrpcClientContext client = GrpcClientContext.start(List.of(scheduled), properties(server.nettyTarget()))) {
            waiting = call(client.channel("svc"), "context-close");
            scheduled.awaitBackoff();
        }
        // the context closed: the channel factory shut its channels down (and the engine's scheduler closed)
        assertThat(endedWithin(waiting).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(service.count("context-close")).as("no attempt after the shut-down").isEqualTo(1);
    }
}
