package io.github.grpcretry.autoconfigure.resilience4j;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.RetryDeciderSource;
import io.github.grpcretry.autoconfigure.GrpcRetryAutoConfiguration;
import io.github.grpcretry.spring.InvalidRetryConfigurationFailureAnalyzer;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.retry.RetryRegistry;
import io.github.resilience4j.springboot3.retry.autoconfigure.RetryAutoConfiguration;
import io.github.resilience4j.springboot3.retry.autoconfigure.RetryMetricsAutoConfiguration;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

/**
 * The resilience4j bridge through the starter: an instance configured with
 * {@code resilience4j.retry.instances.*} (resilience4j-spring-boot3's own auto-configuration makes the
 * RetryRegistry) governs the methods of a net.devh channel that have no policy of their own, against a
 * real in-process server, and {@code resilience4j.retry.calls} (resilience4j-micrometer) counts the
 * calls; start-up checks; the starter without resilience4j on the classpath.
 */
class GrpcRetryResilience4jAutoConfigurationTest {

    private static final String CLIENT = "grpc.retry.clients.inventory.";
    private static final String BACKEND = "resilience4j.retry.instances.backend.";

    private ScriptedServer server;
    private String serverName;

    @BeforeEach
    void startServer() throws Exception {
        serverName = "r4j-context-" + UUID.randomUUID();
        server = ScriptedServer.start(serverName);
    }

    @AfterEach
    void stopServer() {
        server.close();
    }

    private ApplicationContextRunner bare() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(GrpcClientAutoConfiguration.class,
                        GrpcRetryAutoConfiguration.class,
                        MetricsAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
                        CompositeMeterRegistryAutoConfiguration.class))
                .withPropertyValues("grpc.client.inventory.address=in-process:" + serverName);
    }

    /** ClientStreamingRpc has a retry policy of its own: 2 attempts. */
    private static final String[] OWN_POLICY = {
            CLIENT + "service-config.method[0].name[0].service=grpc.testing.SimpleService",
            CLIENT + "service-config.method[0].name[0].method=ClientStreamingRpc",
            CLIENT + "service-config.method[0].retry.max-attempts=2",
            CLIENT + "service-config.method[0].retry.initial-backoff=10ms",
            CLIENT + "service-config.method[0].retry.max-backoff=50ms",
            CLIENT + "service-config.method[0].retry.backoff-multiplier=2",
            CLIENT + "service-config.method[0].retry.retryable-status-codes=unavailable"};

    /** With resilience4j-spring-boot3's retry auto-configuration and its Micrometer binding. */
    private ApplicationContextRunner runner() {
        return bare()
                .withConfiguration(AutoConfigurations.of(RetryAutoConfiguration.class,
                        RetryMetricsAutoConfiguration.class))
                .withPropertyValues(OWN_POLICY)
                .withPropertyValues(
                        CLIENT + "resilience4j-retry=backend",
                        BACKEND + "max-attempts=4",
                        BACKEND + "wait-duration=100ms",
                        BACKEND + "enable-exponential-backoff=true",
                        BACKEND + "exponential-backoff-multiplier=2",
                        BACKEND + "retry-exception-predicate=io.github.grpcretry.resilience4j.UnavailableStatusPredicate");
    }

    private static SimpleServiceGrpc.SimpleServiceBlockingStub stub(ApplicationContext ctx) {
        Channel channel = ctx.getBean(GrpcChannelFactory.class).createChannel("inventory");
        return SimpleServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    private static SimpleRequest request(String text) {
        return SimpleRequest.newBuilder().setRequestMessage(text).build();
    }

    private static Status.Code unary(ApplicationContext ctx, String text) {
        try {
            stub(ctx).unaryRpc(request(text));
            return Status.Code.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode();
        }
    }

    private static Status.Code clientStreaming(ApplicationContext ctx, String... messages) throws Exception {
        Channel channel = ctx.getBean(GrpcChannelFactory.class).createChannel("inventory");
        CompletableFuture<Status.Code> done = new CompletableFuture<>();
        StreamObserver<SimpleRequest> requests = SimpleServiceGrpc.newStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .clientStreamingRpc(new StreamObserver<SimpleResponse>() {
                    @Override
                    public void onNext(SimpleResponse value) {
                    }

                    @Override
                    public void onError(Throwable t) {
                        done.complete(Status.fromThrowable(t).getCode());
                    }

                    @Override
                    public void onCompleted() {
                        done.complete(Status.Code.OK);
                    }
                });
        for (String m : messages) {
            requests.onNext(request(m));
        }
        requests.onCompleted();
        return done.get(15, TimeUnit.SECONDS);
    }

    private static double r4jCalls(MeterRegistry meters, String kind) {
        FunctionCounter c = meters.find("resilience4j.retry.calls").tags("name", "backend", "kind", kind)
                .functionCounter();
        assertThat(c).as("resilience4j.retry.calls{name=backend,kind=%s}", kind).isNotNull();
        return c.count();
    }

    @Test
    void instanceGovernsMethodWithoutPolicyAndCountsTheCalls() throws Exception {
        runner().run(ctx -> {
            assertThat(ctx).hasNotFailed();
            MeterRegistry meters = ctx.getBean(MeterRegistry.class);
            Retry retry = ctx.getBean(RetryRegistry.class).retry("backend");

            // UnaryRpc: no policy of its own -> resilience4j: 100 ms, x2, up to 4 attempts
            server.script(ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE));
            assertThat(unary(ctx, "a")).isEqualTo(Status.Code.OK);
            List<Arrival> arrivals = server.arrivals();
            assertThat(arrivals).extracting(a -> a.previousAttempts).containsExactly(null, 1, 2);
            long first = TimeUnit.NANOSECONDS.toMillis(arrivals.get(1).nanoTime - arrivals.get(0).nanoTime);
            long second = TimeUnit.NANOSECONDS.toMillis(arrivals.get(2).nanoTime - arrivals.get(1).nanoTime);
            assertThat(first).isBetween(95L, 1100L);
            assertThat(second).isBetween(195L, 1200L);
            assertThat(r4jCalls(meters, "successful_with_retry")).isEqualTo(1.0);
            assertThat(meters.get("grpc.client.retry.attempts").tags("client", "inventory", "kind", "retry",
                    "status", "UNAVAILABLE").counter().count()).isEqualTo(1.0);

            // a status the predicate rejects: one attempt, failed_without_retry
            server.reset();
            server.script(ScriptedServer.always(Status.Code.INVALID_ARGUMENT));
            assertThat(unary(ctx, "b")).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(server.arrivalCount()).isEqualTo(1);
            assertThat(r4jCalls(meters, "failed_without_retry")).isEqualTo(1.0);
            assertThat(meters.get("grpc.client.retry.suppressed").tags("client", "inventory", "reason",
                    "non_retryable_status").counter().count()).isEqualTo(1.0);

            // attempts used up: failed_with_retry
            server.reset();
            server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
            assertThat(unary(ctx, "c")).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(server.arrivals()).extracting(a -> a.previousAttempts).containsExactly(null, 1, 2, 3);
            assertThat(r4jCalls(meters, "failed_with_retry")).isEqualTo(1.0);

            // commitment still applies: response headers before the failure -> one arrival, no retry
            server.reset();
            server.script(a -> Action.fail(Status.Code.UNAVAILABLE).headersFirst());
            assertThat(unary(ctx, "d")).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(server.arrivalCount()).isEqualTo(1);
            assertThat(meters.get("grpc.client.retry.suppressed").tags("client", "inventory", "reason", "committed")
                    .counter().count()).isEqualTo(1.0);

            // ClientStreamingRpc has its own policy (2 attempts): resilience4j is not asked
            long totalBefore = retry.getMetrics().getNumberOfTotalCalls();
            server.reset();
            server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
            assertThat(clientStreaming(ctx, "x", "y")).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(server.arrivals()).extracting(a -> a.previousAttempts).containsExactly(null, 1);
            assertThat(retry.getMetrics().getNumberOfTotalCalls()).isEqualTo(totalBefore);

            assertThat(r4jCalls(meters, "successful_without_retry")).isZero();
        });
    }

    @Test
    void globalNamesTheInstanceForEveryChannel() {
        bare().withConfiguration(AutoConfigurations.of(RetryAutoConfiguration.class))
                .withPropertyValues("grpc.retry.clients.GLOBAL.resilience4j-retry=backend",
                        BACKEND + "max-attempts=2", BACKEND + "wait-duration=10ms")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
                    assertThat(unary(ctx, "a")).isEqualTo(Status.Code.UNAVAILABLE);
                    assertThat(server.arrivalCount()).as("resilience4j's default predicate retries every status")
                            .isEqualTo(2);
                    assertThat(ctx.getBean(RetryRegistry.class).retry("backend").getMetrics()
                            .getNumberOfFailedCallsWithRetryAttempt()).isEqualTo(1);
                });
    }

    @Test
    void aRetryRegistryBeanOfTheApplicationIsUsed() {
        bare().withBean(RetryRegistry.class, () -> {
                    RetryRegistry registry = RetryRegistry.ofDefaults();
                    registry.retry("mine", RetryConfig.custom().maxAttempts(3).waitDuration(Duration.ofMillis(10)).build());
                    return registry;
                })
                .withPropertyValues(CLIENT + "resilience4j-retry=mine")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    server.script(ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE));
                    assertThat(unary(ctx, "a")).isEqualTo(Status.Code.OK);
                    assertThat(server.arrivalCount()).isEqualTo(3);
                    assertThat(ctx.getBean(RetryRegistry.class).retry("mine").getMetrics()
                            .getNumberOfSuccessfulCallsWithRetryAttempt()).isEqualTo(1);
                });
    }

    private static String report(Throwable failure) {
        Throwable t = failure;
        while (t != null && !(t instanceof InvalidRetryConfigurationException)) {
            t = t.getCause();
        }
        assertThat(t).as("an InvalidRetryConfigurationException in " + failure).isNotNull();
        FailureAnalysis analysis = new InvalidRetryConfigurationFailureAnalyzer(new org.springframework.core.env.StandardEnvironment()).analyze(failure);
        assertThat(analysis).isNotNull();
        return analysis.getDescription() + "\n---\n" + analysis.getAction();
    }

    @Test
    void anInstanceTheRegistryDoesNotHoldStopsStartUp() {
        runner().withPropertyValues(CLIENT + "resilience4j-retry=backnd").run(ctx -> {
            assertThat(ctx).hasFailed();
            String report = report(ctx.getStartupFailure());
            assertThat(report)
                    .contains("Property: grpc.retry.clients.inventory.resilience4j-retry")
                    .contains("Value:    backnd")
                    .contains("names no Retry instance of the resilience4j RetryRegistry (it holds: backend)")
                    .contains("declare it under resilience4j.retry.instances.backnd.*")
                    .contains("or name one of: backend");
        });
    }

    @Test
    void withoutARetryRegistryBeanANamedInstanceStopsStartUp() {
        bare().withPropertyValues("grpc.retry.clients.GLOBAL.resilience4j-retry=backend").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(report(ctx.getStartupFailure()))
                    .contains("Property: grpc.retry.clients.GLOBAL.resilience4j-retry")
                    .contains("the application has no RetryRegistry bean")
                    .contains("io.github.resilience4j:resilience4j-spring-boot3");
        });
    }

    @Test
    void withoutARetryRegistryAndWithoutANameTheStarterWorksAsBefore() {
        bare().withPropertyValues(CLIENT + "service-config.method[0].name[0].service=grpc.testing.SimpleService",
                CLIENT + "service-config.method[0].retry.max-attempts=3",
                CLIENT + "service-config.method[0].retry.initial-backoff=10ms",
                CLIENT + "service-config.method[0].retry.max-backoff=50ms",
                CLIENT + "service-config.method[0].retry.backoff-multiplier=2",
                CLIENT + "service-config.method[0].retry.retryable-status-codes=unavailable").run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx).hasSingleBean(RetryDeciderSource.class);
                    server.script(ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE));
                    assertThat(unary(ctx, "a")).isEqualTo(Status.Code.OK);
                    assertThat(server.arrivalCount()).isEqualTo(3);
                });
    }

    @Test
    void withoutResilience4jOnTheClasspathTheEngineWorks() {
        bare().withClassLoader(new FilteredClassLoader("io.github.resilience4j"))
                .withPropertyValues(OWN_POLICY)
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx).doesNotHaveBean(RetryDeciderSource.class);
                    assertThat(ctx).hasBean("grpcRetryResilience4jCheck");
                    server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
                    assertThat(clientStreaming(ctx, "x")).isEqualTo(Status.Code.UNAVAILABLE);
                    assertThat(server.arrivalCount()).as("its own policy").isEqualTo(2);
                    server.reset();
                    assertThat(unary(ctx, "a")).isEqualTo(Status.Code.UNAVAILABLE);
                    assertThat(server.arrivalCount()).as("no policy, no resilience4j: passed through").isEqualTo(1);
                });
    }

    @Test
    void withoutResilience4jOnTheClasspathANamedInstanceStopsStartUp() {
        bare().withClassLoader(new FilteredClassLoader("io.github.resilience4j"))
                .withPropertyValues(CLIENT + "resilience4j-retry=backend")
                .run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(report(ctx.getStartupFailure()))
                    .contains("Property: grpc.retry.clients.inventory.resilience4j-retry")
                    .contains("resilience4j-retry is not on the classpath")
                    .contains("add io.github.resilience4j:resilience4j-spring-boot3");
        });
    }
}
