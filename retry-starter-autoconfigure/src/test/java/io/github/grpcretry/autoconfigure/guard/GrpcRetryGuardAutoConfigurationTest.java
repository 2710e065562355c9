package io.github.grpcretry.autoconfigure.guard;

import io.github.grpcretry.autoconfigure.GuardChannelConfigurer;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.autoconfigure.GrpcRetryAutoConfiguration;
import io.github.grpcretry.autoconfigure.GrpcRetryChannelConfigurer;
import io.github.grpcretry.autoconfigure.deadline.DeadlineChannelConfigurer;
import io.github.grpcretry.deadline.DeadlineServerInterceptor;
import io.github.grpcretry.guard.GuardEventListener;
import io.github.grpcretry.guard.GuardServerInterceptor;
import io.github.grpcretry.internal.pushback.Pushback;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.Metadata;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import net.devh.boot.grpc.client.inject.GrpcClient;
import net.devh.boot.grpc.common.autoconfigure.GrpcCommonCodecAutoConfiguration;
import net.devh.boot.grpc.server.autoconfigure.GrpcAdviceAutoConfiguration;
import net.devh.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration;
import net.devh.boot.grpc.server.autoconfigure.GrpcServerFactoryAutoConfiguration;
import net.devh.boot.grpc.server.interceptor.GlobalServerInterceptorRegistry;
import net.devh.boot.grpc.server.service.GrpcService;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The guard's auto-configuration in real contexts with net.devh's server and client. */
class GrpcRetryGuardAutoConfigurationTest {

    private static ApplicationContextRunner runner() {
        return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(
                GrpcCommonCodecAutoConfiguration.class, GrpcServerFactoryAutoConfiguration.class,
                GrpcServerAutoConfiguration.class, GrpcAdviceAutoConfiguration.class, GrpcClientAutoConfiguration.class,
                MetricsAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
                CompositeMeterRegistryAutoConfiguration.class,
                GrpcRetryAutoConfiguration.class))
                .withPropertyValues("grpc.server.port=-1", "grpc.server.in-process-name=guard-ac-" + UUID.randomUUID());
    }

    @Test
    void isListedAsAnAutoConfiguration() {
        assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()).getCandidates())
                .contains(GrpcRetryAutoConfiguration.class.getName());
    }

    @Test
    void guardIsOnByDefaultAndOrderedAroundTheDeadlineRules() {
        runner().run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx).hasBean("grpcRetryGuardServerInterceptor").hasBean("grpcRetryGuardChannelConfigurer");
            List<ServerInterceptor> interceptors = ctx.getBean(GlobalServerInterceptorRegistry.class).getServerInterceptors();
            int guard = indexOf(interceptors, GuardServerInterceptor.class);
            int deadline = indexOf(interceptors, DeadlineServerInterceptor.class);
            assertThat(guard).as("net.devh applies the list first-outermost").isGreaterThanOrEqualTo(0).isLessThan(deadline);
            assertThat(interceptors.subList(0, guard)).as("outside everything but net.devh's request scope "
                    + "(exception handling of @GrpcAdvice has order 0)")
                    .allMatch(i -> i instanceof net.devh.boot.grpc.server.scope.GrpcRequestScope);

            List<GrpcChannelConfigurer> configurers = ctx.getBeanProvider(GrpcChannelConfigurer.class).orderedStream()
                    .toList();
            int engine = indexOf(configurers, GrpcRetryChannelConfigurer.class);
            int guardConfigurer = indexOf(configurers, GuardChannelConfigurer.class);
            int deadlineConfigurer = indexOf(configurers, DeadlineChannelConfigurer.class);
            assertThat(engine).isLessThan(guardConfigurer);
            assertThat(guardConfigurer).isLessThan(deadlineConfigurer);
        });
    }

    @Test
    void offWithItsPropertyOrTheStarters() {
        runner().withPropertyValues("grpc.retry.guard.enabled=false").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx).doesNotHaveBean(GuardServerInterceptor.class).doesNotHaveBean(GuardChannelConfigurer.class);
            assertThat(ctx).hasSingleBean(DeadlineServerInterceptor.class);
        });
        runner().withPropertyValues("grpc.retry.enabled=false").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx).doesNotHaveBean(GuardServerInterceptor.class).doesNotHaveBean(GuardChannelConfigurer.class);
        });
    }

    @Test
    void withoutMicrometerTheGuardStillRuns() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(
                GrpcCommonCodecAutoConfiguration.class, GrpcServerFactoryAutoConfiguration.class,
                GrpcServerAutoConfiguration.class, GrpcClientAutoConfiguration.class,
                GrpcRetryAutoConfiguration.class))
                .withPropertyValues("grpc.server.port=-1", "grpc.server.in-process-name=guard-ac-" + UUID.randomUUID())
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx).doesNotHaveBean("grpcRetryGuardMeters").hasSingleBean(GuardServerInterceptor.class);
                });
    }

    /** Calls C once, then answers UNAVAILABLE whatever C said. */
    @GrpcService
    static class FailsAfterCallingNext extends SimpleServiceGrpc.SimpleServiceImplBase {

        @GrpcClient("next")
        SimpleServiceGrpc.SimpleServiceBlockingStub next;

        @Override
        public void unaryRpc(SimpleRequest request, StreamObserver<SimpleResponse> observer) {
            try {
                next.withDeadlineAfter(5, TimeUnit.SECONDS).unaryRpc(request);
            } catch (StatusRuntimeException ignored) {
                // the answer below is the same either way
            }
            observer.onError(Status.UNAVAILABLE.withDescription("own failure").asRuntimeException());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Listeners {
        final ConcurrentLinkedQueue<String> events = new ConcurrentLinkedQueue<>();

        @Bean
        GuardEventListener recordingGuardListener() {
            return new GuardEventListener() {
                @Override
                public void inboundMarked(String inboundMethod, String downstreamMethod, Status.Code code) {
                    events.add("marked " + code);
                }
            };
        }
    }

    @Test
    void theGuardJudgesTheLogicalCallNotItsAttempts() throws Exception {
        try (ScriptedServer c = ScriptedServer.start("guard-ac-c-" + UUID.randomUUID())) {
            String self = "guard-ac-self-" + UUID.randomUUID();
            String m = "grpc.retry.clients.next.service-config.method[0].";
            runner().withUserConfiguration(FailsAfterCallingNext.class, Listeners.class)
                    .withPropertyValues(
                            "grpc.server.in-process-name=" + self,
                            "grpc.client.next.address=in-process:" + c.inProcessName(),
                            "grpc.client.self.address=in-process:" + self,
                            m + "name[0].service=grpc.testing.SimpleService",
                            m + "retry.max-attempts=3",
                            m + "retry.initial-backoff=1ms",
                            m + "retry.max-backoff=5ms",
                            m + "retry.backoff-multiplier=2",
                            m + "retry.retryable-status-codes=unavailable")
                    .run(ctx -> {
                        assertThat(ctx).hasNotFailed();
                        SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(
                                ctx.getBean(GrpcChannelFactory.class).createChannel("self"));

                        // C fails the first attempt and answers the retry: the logical call succeeded
                        c.script(ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE));
                        StatusRuntimeException e = call(stub);
                        assertThat(c.arrivalCount()).isEqualTo(2);
                        assertThat(e.getTrailers().get(Pushback.KEY)).as("a retried-then-successful call is no reason")
                                .isNull();

                        // C is down: retries used up
                        c.reset();
                        c.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
                        e = call(stub);
                        assertThat(c.arrivalCount()).isEqualTo(3);
                        assertThat(e.getTrailers().get(Pushback.KEY)).isEqualTo("-1");
                        assertThat(ctx.getBean(Listeners.class).events).containsExactly("marked UNAVAILABLE");
                        assertThat(ctx.getBean(io.micrometer.core.instrument.MeterRegistry.class)
                                .get("grpc.server.retry.guard").tag("method", "grpc.testing.SimpleService/UnaryRpc")
                                .counter().count()).isEqualTo(1.0);
                    });
        }
    }

    private static StatusRuntimeException call(SimpleServiceGrpc.SimpleServiceBlockingStub stub) {
        try {
            stub.withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(SimpleRequest.newBuilder().setRequestMessage("x").build());
        } catch (StatusRuntimeException e) {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(e.getTrailers()).isNotNull();
            return e;
        }
        throw new AssertionError("expected a failure");
    }

    private static int indexOf(List<?> list, Class<?> type) {
        for (int i = 0; i < list.size(); i++) {
            if (type.isInstance(list.get(i))) {
                return i;
            }
        }
        return -1;
    }
}
