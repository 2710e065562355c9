package io.github.grpcretry.autoconfigure.deadline;

import io.github.grpcretry.autoconfigure.GrpcRetryAutoConfiguration;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.deadline.DeadlineServerInterceptor;
import io.github.grpcretry.deadline.GrpcContextPropagation;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.spring.InvalidRetryConfigurationFailureAnalyzer;
import io.github.grpcretry.spring.web.GrpcDeadlineHttpFilter;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.context.ContextRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.task.TaskDecorator;

class GrpcRetryDeadlineAutoConfigurationTest {

    private static ScriptedServer server;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(GrpcRetryAutoConfiguration.class));

    @BeforeAll
    static void start() throws Exception {
        server = ScriptedServer.start("deadline-autoconfig");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void contributesItsBeans() {
        ContextRegistry.getInstance().removeThreadLocalAccessor(GrpcContextPropagation.THREAD_LOCAL_KEY);
        runner.run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx).hasBean("grpcDeadlineChannelConfigurer").hasBean("grpcContextTaskDecorator")
                    .hasBean("grpcContextThreadLocalAccessor").hasBean("grpcDeadlineServerInterceptor");
            assertThat(ctx).doesNotHaveBean(GrpcDeadlineHttpFilter.class);
            assertThat(ctx.getBean("grpcDeadlineChannelConfigurer")).isInstanceOf(GrpcChannelConfigurer.class);
            assertThat(ctx.getBean("grpcDeadlineServerInterceptor")).isInstanceOf(DeadlineServerInterceptor.class);
            assertThat(ContextRegistry.getInstance().getThreadLocalAccessors())
                    .anySatisfy(a -> assertThat(a.key()).isEqualTo(GrpcContextPropagation.THREAD_LOCAL_KEY));
            GrpcRetryProperties.Deadline p = ctx.getBean(GrpcRetryProperties.class).deadline();
            assertThat(p.reserve()).isZero();
            assertThat(p.minRemaining()).isZero();
            assertThat(p.defaultTimeout()).isNull();
            assertThat(p.http().max()).isEqualTo(Duration.ofSeconds(30));
            assertThat(p.http().header()).isEmpty();
        });
    }

    @Test
    void offWhenTheStarterIsDisabled() {
        runner.withPropertyValues("grpc.retry.enabled=false").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx).doesNotHaveBean(GrpcRetryProperties.class)
                    .doesNotHaveBean("grpcDeadlineChannelConfigurer").doesNotHaveBean("grpcContextTaskDecorator");
        });
    }

    @Test
    void backsOffWhenTheApplicationHasATaskDecorator() {
        runner.withUserConfiguration(UserDecorator.class).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx).doesNotHaveBean("grpcContextTaskDecorator");
            assertThat(ctx.getBeansOfType(TaskDecorator.class)).containsOnlyKeys("userDecorator");
        });
    }

    @Test
    void taskDecoratorCarriesTheGrpcContextThroughTheAccessor() {
        runner.run(ctx -> {
            TaskDecorator decorator = new org.springframework.core.task.support.ContextPropagatingTaskDecorator();
            java.util.concurrent.ScheduledExecutorService timer =
                    java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newSingleThreadExecutor();
            try {
                long before = System.nanoTime();
                Context.CancellableContext deadline = Context.current()
                        .withDeadlineAfter(1, java.util.concurrent.TimeUnit.SECONDS, timer);
                Runnable[] task = new Runnable[1];
                java.util.concurrent.atomic.AtomicReference<java.util.Optional<Duration>> seen =
                        new java.util.concurrent.atomic.AtomicReference<>();
                deadline.run(() -> task[0] = decorator.decorate(
                        () -> seen.set(io.github.grpcretry.deadline.Deadlines.remaining())));
                pool.submit(task[0]).get();
                long took = System.nanoTime() - before;
                deadline.cancel(null);
                assertThat(seen.get()).isPresent();
                // the context's deadline, read on the pool: at most 1 s left, less at most the time it all took
                assertThat(seen.get().get().toNanos()).isBetween(1_000_000_000L - took, 1_000_000_000L);
            } finally {
                timer.shutdownNow();
                pool.shutdownNow();
            }
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class UserDecorator {
        @Bean
        TaskDecorator userDecorator() {
            return r -> r;
        }
    }

    @Test
    void propertiesBind() {
        runner.withPropertyValues("grpc.retry.deadline.default-timeout=5s", "grpc.retry.deadline.reserve=20ms",
                "grpc.retry.deadline.min-remaining=50", "grpc.retry.deadline.http.max=10s").run(ctx -> {
                    GrpcRetryProperties.Deadline p = ctx.getBean(GrpcRetryProperties.class).deadline();
                    assertThat(p.defaultTimeout()).isEqualTo(Duration.ofSeconds(5));
                    assertThat(p.reserve()).isEqualTo(Duration.ofMillis(20));
                    assertThat(p.minRemaining()).as("plain numbers are ms").isEqualTo(Duration.ofMillis(50));
                    assertThat(p.http().max()).isEqualTo(Duration.ofSeconds(10));
                });
    }

    private void assertFailsNaming(String property, String... values) {
        runner.withPropertyValues(values).run(ctx -> {
            assertThat(ctx).hasFailed();
            Throwable failure = ctx.getStartupFailure();
            InvalidRetryConfigurationException cause = findCause(failure);
            assertThat(cause).as("cause of %s", failure).isNotNull();
            assertThat(cause.getProblems()).extracting(ConfigProblem::path).contains(property);
            FailureAnalysis analysis = new InvalidRetryConfigurationFailureAnalyzer(new StandardEnvironment())
                    .analyze(failure);
            assertThat(analysis.getDescription()).contains("Property: " + property).contains("Reason:");
            assertThat(analysis.getAction()).contains(property);
        });
    }

    private static InvalidRetryConfigurationException findCause(Throwable t) {
        while (t != null) {
            if (t instanceof InvalidRetryConfigurationException e) {
                return e;
            }
            t = t.getCause();
        }
        return null;
    }

    @Test
    void invalidValuesStopStartUpNamingTheProperty() {
        assertFailsNaming("grpc.retry.deadline.reserve", "grpc.retry.deadline.reserve=-1s");
        assertFailsNaming("grpc.retry.deadline.min-remaining", "grpc.retry.deadline.min-remaining=-5ms");
        assertFailsNaming("grpc.retry.deadline.default-timeout", "grpc.retry.deadline.default-timeout=0s");
        assertFailsNaming("grpc.retry.deadline.default-timeout", "grpc.retry.deadline.default-timeout=40ms",
                "grpc.retry.deadline.min-remaining=50ms");
        assertFailsNaming("grpc.retry.deadline.http.max", "grpc.retry.deadline.http.max=0");
        assertFailsNaming("grpc.retry.deadline.http.header", "grpc.retry.deadline.http.header=X Timeout");
    }

    @Test
    void unparsableValuesStopStartUpNamingTheProperty() {
        runner.withPropertyValues("grpc.retry.deadline.reserve=soon").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).rootCause().isNotNull();
            Throwable t = ctx.getStartupFailure();
            StringBuilder messages = new StringBuilder();
            for (; t != null; t = t.getCause()) {
                messages.append(t.getMessage()).append('\n');
            }
            assertThat(messages.toString()).contains("grpc.retry.deadline.reserve");
        });
    }

    // ---- ordering of builder interceptors -------------------------------------------------------

    /** Records the order interceptors run in and the deadline each one is handed. */
    static final class Probe implements ClientInterceptor {
        final String name;
        final List<String> log;

        Probe(String name, List<String> log) {
            this.name = name;
            this.log = log;
        }

        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                CallOptions callOptions, Channel next) {
            log.add(name + (callOptions.getDeadline() == null ? " (no deadline)" : " (deadline)"));
            return next.newCall(method, callOptions);
        }
    }

    @Test
    void managedChannelBuilderRunsTheLastAddedInterceptorFirst() {
        List<String> log = new CopyOnWriteArrayList<>();
        ManagedChannel ch = InProcessChannelBuilder.forName(server.inProcessName())
                .intercept(new Probe("added first", log))
                .intercept(new Probe("added second", log))
                .build();
        try {
            SimpleServiceGrpc.newBlockingStub(ch).unaryRpc(SimpleRequest.getDefaultInstance());
        } finally {
            ch.shutdownNow();
        }
        assertThat(log).containsExactly("added second (no deadline)", "added first (no deadline)");
    }

    @Configuration(proxyBeanMethods = false)
    static class EngineLikeConfigurer {
        static final List<String> LOG = new CopyOnWriteArrayList<>();

        /** Stands for the retry engine's configurer: an ordinary order value, lower than the deadline one. */
        @Bean
        @Order(0)
        GrpcChannelConfigurer engineLikeConfigurer() {
            return (builder, name) -> builder.intercept(new Probe("engine", LOG));
        }
    }

    @Test
    void theDeadlineRulesRunOutsideTheEngineOnNetDevhChannels() {
        EngineLikeConfigurer.LOG.clear();
        server.reset();
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(GrpcClientAutoConfiguration.class,
                        GrpcRetryAutoConfiguration.class))
                .withUserConfiguration(EngineLikeConfigurer.class)
                .withPropertyValues("grpc.client.svc.address=in-process:" + server.inProcessName(),
                        "grpc.retry.deadline.default-timeout=1500ms")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    Channel channel = ctx.getBean(GrpcChannelFactory.class).createChannel("svc");
                    SimpleServiceGrpc.newBlockingStub(channel).unaryRpc(SimpleRequest.getDefaultInstance());
                });
        assertThat(EngineLikeConfigurer.LOG).as("the engine is handed the deadline the rules gave the call")
                .containsExactly("engine (deadline)");
        Long seen = server.arrivals().get(0).deadlineRemainingNanos;
        assertThat(seen).isNotNull();
        assertThat(seen / 1_000_000).isBetween(1000L, 1500L);
        assertThat(Context.current()).isSameAs(Context.ROOT);
    }
}
