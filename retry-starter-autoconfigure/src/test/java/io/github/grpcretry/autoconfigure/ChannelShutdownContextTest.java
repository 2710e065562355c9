package io.github.grpcretry.autoconfigure;

import static io.github.grpcretry.testing.ScheduledRetries.failsWithin;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.spring.reload.ReloadableChannels;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.github.grpcretry.testing.ScheduledRetries;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ServiceConfigResolverProvider;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

/**
 * net.devh's channel shut down while a call waits in a long backoff (interceptor engine, real server): net.devh
 * shuts its channels down when its channel factory closes (at the context's shut-down, or when the application
 * closes it), and the engine follows that, so the call ends at once {@code UNAVAILABLE} "Channel shutdown
 * invoked", long before its backoff (the server's pushback) runs out, and the server sees no further attempt.
 * An engine made later (the resolver's new service config, seen running by its attempt count) follows it too.
 */
class ChannelShutdownContextTest {

    /** The server's pushback: the backoff each retry waits. */
    static final long BACKOFF_MS = 60_000;
    /** How long a call may take to end after the shut-down: half the backoff (it ends within milliseconds). */
    static final long WITHIN_MS = BACKOFF_MS / 2;
    private static final String M = "grpc.retry.clients.svc.service-config.method[0].";

    private ScriptedServer server;
    private final AtomicBoolean failing = new AtomicBoolean(true);
    /** While set, a failure carries no pushback: the policy's own millisecond backoffs apply. */
    private final AtomicBoolean policyBackoff = new AtomicBoolean();

    @BeforeEach
    void startServer() throws Exception {
        server = ScriptedServer.startNetty();
        server.script(a -> !failing.get() ? Action.ok()
                : policyBackoff.get() ? Action.fail(Status.Code.UNAVAILABLE)
                : Action.fail(Status.Code.UNAVAILABLE).pushback(String.valueOf(BACKOFF_MS)));
    }

    @AfterEach
    void stopServer() {
        server.close();
    }

    private ApplicationContextRunner runner(ScheduledRetries scheduled, String address) {
        return RetryTestContexts.runner()
                .withConfiguration(AutoConfigurations.of(GrpcRetryAutoConfiguration.class))
                .withBean("scheduled", ScheduledRetries.class, () -> scheduled)
                .withPropertyValues("grpc.retry.engine=interceptor", "grpc.client.svc.address=" + address,
                        "grpc.client.svc.negotiation-type=plaintext");
    }

    private static String[] retryPolicy() {
        return new String[] {M + "name[0].service=" + SimpleServiceGrpc.SERVICE_NAME, M + "retry.max-attempts=5",
            M + "retry.initial-backoff=1ms", M + "retry.max-backoff=2ms", M + "retry.backoff-multiplier=2",
            M + "retry.retryable-status-codes=UNAVAILABLE"};
    }

    private static Future<SimpleResponse> call(ApplicationContext ctx) {
        Channel channel = ctx.getBean(GrpcChannelFactory.class).createChannel("svc");
        return SimpleServiceGrpc.newFutureStub(channel).unaryRpc(SimpleRequest.newBuilder().setRequestMessage("x").build());
    }

    @Test
    void closingTheChannelFactoryEndsACallInBackoffAtOnce() throws Exception {
        ScheduledRetries scheduled = new ScheduledRetries();
        runner(scheduled, "static://" + server.target()).withPropertyValues(retryPolicy()).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            Future<SimpleResponse> waiting = call(ctx);
            scheduled.awaitBackoff(BACKOFF_MS, WITHIN_MS);
            ctx.getBean(GrpcChannelFactory.class).close();
            Status status = failsWithin(waiting, WITHIN_MS);
            assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(status.getDescription()).isEqualTo("Channel shutdown invoked");
            assertThat(server.arrivalCount()).as("no attempt after the shut-down").isEqualTo(1);
            assertThat(scheduled.noneLeft()).as("no retry scheduled after it").isTrue();
        });
    }

    @Test
    void theContextsShutdownEndsACallInBackoffAtOnce() throws Exception {
        ScheduledRetries scheduled = new ScheduledRetries();
        Future<?>[] waiting = new Future<?>[1];
        runner(scheduled, "static://" + server.target()).withPropertyValues(retryPolicy()).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            waiting[0] = call(ctx);
            scheduled.awaitBackoff(BACKOFF_MS, WITHIN_MS);
        });
        // the context closed: the engine's scheduler (closed first: "the client is shutting down") and the channel
        // factory (its channels shut down) each end such a call at once
        Status status = failsWithin(waiting[0], WITHIN_MS);
        assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).as("no attempt after the shut-down").isEqualTo(1);
    }

    @Test
    void anEngineMadeFromTheResolversNewServiceConfigFollowsTheShutdownToo() throws Exception {
        ScheduledRetries scheduled = new ScheduledRetries();
        try (ServiceConfigResolverProvider resolver = ServiceConfigResolverProvider.register("shutdown-boot3",
                server.port(), ServiceConfigResolverProvider.retryPolicy(SimpleServiceGrpc.SERVICE_NAME, 5))) {
            runner(scheduled, resolver.target()).run(ctx -> {
                assertThat(ctx).hasNotFailed();
                failing.set(false);
                call(ctx).get(WITHIN_MS, TimeUnit.MILLISECONDS);
                resolver.update(ServiceConfigResolverProvider.retryPolicy(SimpleServiceGrpc.SERVICE_NAME, 4));
                // the new service config's engine runs the calls now: 4 attempts (its policy's ms backoffs), not 5
                failing.set(true);
                policyBackoff.set(true);
                server.reset();
                assertThat(failsWithin(call(ctx), WITHIN_MS).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(server.arrivalCount()).as("attempts under the new service config").isEqualTo(4);
                assertThat(scheduled.takeAll()).as("its retries").isEqualTo(3);

                policyBackoff.set(false);
                server.reset();
                Future<SimpleResponse> waiting = call(ctx);
                scheduled.awaitBackoff(BACKOFF_MS, WITHIN_MS);
                ctx.getBean(GrpcChannelFactory.class).close();
                Status status = failsWithin(waiting, WITHIN_MS);
                assertThat(status.getDescription()).isEqualTo("Channel shutdown invoked");
                assertThat(server.arrivalCount()).isEqualTo(1);
            });
        }
    }
}
