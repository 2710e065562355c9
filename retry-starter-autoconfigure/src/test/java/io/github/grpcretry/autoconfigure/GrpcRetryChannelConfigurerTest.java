package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.spring.channel.ChannelSetup;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import org.junit.jupiter.api.Test;

class GrpcRetryChannelConfigurerTest {

    private static final String M = "grpc.retry.clients.inventory.service-config.method[0].";

    @Test
    void interceptorEngineKeepsTimeoutsNotRetriesAndCallsInstaller() throws Exception {
        String name = "configurer-" + UUID.randomUUID();
        List<String> installedOn = new CopyOnWriteArrayList<>();
        List<String> intercepted = new CopyOnWriteArrayList<>();
        try (ScriptedServer server = ScriptedServer.start(name)) {
            RetryTestContexts.runner()
                    .withPropertyValues("grpc.client.inventory.address=in-process:" + name,
                            M + "name[0].service=grpc.testing.SimpleService",
                            M + "timeout=200ms",
                            M + "retry.max-attempts=3", M + "retry.initial-backoff=10ms", M + "retry.max-backoff=10ms",
                            M + "retry.backoff-multiplier=1", M + "retry.retryable-status-codes=UNAVAILABLE")
                    .run(ctx -> {
                        ChannelRetryConfigs configs = ctx.getBean(ChannelRetryConfigs.class);
                        GrpcRetryChannelConfigurer configurer = new GrpcRetryChannelConfigurer(configs,
                                ChannelSetup.Engine.INTERCEPTOR, (builder, channel, config) -> {
                                    installedOn.add(channel + ":" + config.serviceConfig().methodConfigs().size());
                                    builder.intercept(new ClientInterceptor() {
                                        @Override
                                        public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method,
                                                CallOptions options, Channel next) {
                                            intercepted.add(method.getBareMethodName());
                                            return next.newCall(method, options);
                                        }
                                    });
                                }, null);
                        InProcessChannelBuilder builder = InProcessChannelBuilder.forName(name);
                        configurer.accept(builder, "inventory");
                        ManagedChannel channel = builder.build();
                        try {
                            SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(channel);
                            // retry parts are left to the interceptor: grpc-java does not retry
                            server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
                            assertThatThrownBy(() -> stub.unaryRpc(SimpleRequest.getDefaultInstance()))
                                    .isInstanceOf(StatusRuntimeException.class);
                            assertThat(server.arrivalCount()).isEqualTo(1);
                            // the timeout still applies
                            server.script(a -> Action.ok().delay(2000));
                            assertThatThrownBy(() -> stub.unaryRpc(SimpleRequest.getDefaultInstance()))
                                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> assertThat(
                                            e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
                        } finally {
                            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                        }
                    });
        }
        assertThat(installedOn).containsExactly("inventory:1");
        assertThat(intercepted).containsExactly("UnaryRpc", "UnaryRpc");
    }

    @Test
    void inProcessServerNamesMapBackToTheClientName() {
        RetryTestContexts.runner()
                .withPropertyValues("grpc.client.inventory.address=in-process:inv-server",
                        "grpc.client.orders.address=in-process:orders",
                        "grpc.retry.clients.inventory.max-attempts-cap=3")
                .run(ctx -> {
                    GrpcRetryChannelConfigurer c = ctx.getBean(GrpcRetryChannelConfigurer.class);
                    assertThat(c.channelName("inv-server")).isEqualTo("inventory");
                    assertThat(c.channelName("inventory")).isEqualTo("inventory");
                    assertThat(c.channelName("orders")).isEqualTo("orders");
                    assertThat(c.channelName("unknown")).isEqualTo("unknown");
                    assertThat(ctx).hasSingleBean(GrpcChannelFactory.class);
                });
    }

    @Test
    void anInProcessServerSharedByClientsMapsToTheClientAnEntryMatchesInAnotherCase() {
        // net.devh passes the server name "shared" for both clients; the entry "inventory" (as an environment
        // variable arrives) is the client Inventory's by start-up's rule, so that is the name, not Orders
        RetryTestContexts.runner()
                .withPropertyValues("grpc.client.Orders.address=in-process:shared",
                        "grpc.client.Inventory.address=in-process:shared",
                        "grpc.retry.clients.inventory.max-attempts-cap=3")
                .run(ctx -> {
                    GrpcRetryChannelConfigurer c = ctx.getBean(GrpcRetryChannelConfigurer.class);
                    assertThat(c.channelName("shared")).isEqualTo("Inventory");
                    assertThat(ctx.getBean(ChannelRetryConfigs.class).forChannel(c.channelName("shared")).maxAttemptsCap())
                            .isEqualTo(3);
                });
        // no entry matches either client: the first client naming the server, as before
        RetryTestContexts.runner()
                .withPropertyValues("grpc.client.Orders.address=in-process:shared",
                        "grpc.client.Inventory.address=in-process:shared",
                        "grpc.retry.clients.invntory.max-attempts-cap=3")
                .run(ctx -> assertThat(ctx.getBean(GrpcRetryChannelConfigurer.class).channelName("shared"))
                        .isEqualTo("Orders"));
    }

    @Test
    void beansAndDisabling() {
        RetryTestContexts.runner().run(ctx -> {
            assertThat(ctx).hasBean("grpcRetryChannelConfigs").hasBean("grpcRetryLimiterRegistry")
                    .hasBean("grpcRetryChannelConfigurer");
            assertThat(ctx.getBean(GrpcRetryChannelConfigurer.class).engine()).isEqualTo(ChannelSetup.Engine.INTERCEPTOR);
            ChannelRetryConfig any = ctx.getBean(ChannelRetryConfigs.class).forChannel("any");
            assertThat(any.maxAttemptsCap()).isEqualTo(5);
            assertThat(any.perRpcBufferLimit()).isEqualTo(1L << 20);
            assertThat(any.retryBufferSize()).isEqualTo(16L << 20);
            assertThat(any.budget()).isNull();
        });
        RetryTestContexts.runner().withPropertyValues("grpc.retry.enabled=false")
                .run(ctx -> assertThat(ctx).doesNotHaveBean(GrpcRetryChannelConfigurer.class)
                        .doesNotHaveBean(ChannelRetryConfigs.class));
        RetryTestContexts.runner().withPropertyValues("grpc.retry.engine=NATIVE")
                .run(ctx -> assertThat(ctx.getBean(GrpcRetryChannelConfigurer.class).engine())
                        .isEqualTo(ChannelSetup.Engine.NATIVE));
    }
}
