package io.github.grpcretry.autoconfigure.guard;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.metrics.RetryMeterNames;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import net.devh.boot.grpc.client.inject.GrpcClient;
import net.devh.boot.grpc.server.service.GrpcService;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import io.github.grpcretry.autoconfigure.GrpcRetryAutoConfiguration;
import net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import net.devh.boot.grpc.common.autoconfigure.GrpcCommonCodecAutoConfiguration;
import net.devh.boot.grpc.server.autoconfigure.GrpcAdviceAutoConfiguration;
import net.devh.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration;
import net.devh.boot.grpc.server.autoconfigure.GrpcServerFactoryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

/**
 * docs/design.md §8 / docs/design.md §17 (R3) "three layers": real services A → B → C on net.devh's in-process
 * transport, A and B each a Spring Boot application with this starter whose gRPC service relays to
 * the next layer through a net.devh client; C is down (always UNAVAILABLE). The test calls A through
 * A's own starter-built channel ("entry"), so three layers retry: the entry client, A and B, each up
 * to 3 attempts. Counted: the calls reaching C per original request.
 */
class GuardChainTest {

    private static final int N = 100;
    private static final int N_UNLIMITED = 20;
    private static final String SERVICE = "grpc.testing.SimpleService";
    private static final String UNARY = SERVICE + "/UnaryRpc";

    private static ScriptedServer c;

    @BeforeAll
    static void startC() throws Exception {
        c = ScriptedServer.start("chain-c-" + UUID.randomUUID()).script(a -> Action.fail(Status.Code.UNAVAILABLE));
    }

    @AfterAll
    static void stopC() {
        c.close();
    }

    /** A layer: its gRPC service calls the next layer (client "next") and answers with its status. */
    @SpringBootConfiguration
    @ImportAutoConfiguration({
            // net.devh's server and client, with its exception handling (@GrpcAdvice)
            GrpcCommonCodecAutoConfiguration.class, GrpcServerFactoryAutoConfiguration.class,
            GrpcServerAutoConfiguration.class, GrpcAdviceAutoConfiguration.class, GrpcClientAutoConfiguration.class,
            // Micrometer with a simple registry
            MetricsAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
            CompositeMeterRegistryAutoConfiguration.class,
            // this starter (its auto-configuration is listed in AutoConfiguration.imports: see
            // GrpcRetryGuardAutoConfigurationTest)
            GrpcRetryAutoConfiguration.class})
    @Import(Relay.class)
    static class Layer {
    }

    @GrpcService
    static class Relay extends SimpleServiceGrpc.SimpleServiceImplBase {

        final AtomicInteger handled = new AtomicInteger();

        @GrpcClient("next")
        SimpleServiceGrpc.SimpleServiceBlockingStub next;

        @Override
        public void unaryRpc(SimpleRequest request, StreamObserver<SimpleResponse> observer) {
            handled.incrementAndGet();
            SimpleResponse response;
            try {
                response = next.withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(request);
            } catch (StatusRuntimeException e) {
                observer.onError(e.getStatus().asRuntimeException()); // the status only, as most services do
                return;
            }
            observer.onNext(response);
            observer.onCompleted();
        }
    }

    /** Every layer's channels: up to 3 attempts on UNAVAILABLE, a short backoff. */
    private static List<String> retryProperties(boolean budget) {
        String m = "grpc.retry.clients.GLOBAL.service-config.method[0].";
        List<String> p = new ArrayList<>(List.of(
                m + "name[0].service=" + SERVICE,
                m + "retry.max-attempts=3",
                m + "retry.initial-backoff=200us",
                m + "retry.max-backoff=1ms",
                m + "retry.backoff-multiplier=2",
                m + "retry.retryable-status-codes=unavailable"));
        if (budget) {
            p.add("grpc.retry.clients.GLOBAL.budget.ratio=0.1");
            p.add("grpc.retry.clients.GLOBAL.budget.min-retries-per-second=0");
        }
        return p;
    }

    private static ConfigurableApplicationContext layer(String serverName, String next, boolean guard, boolean budget,
            String engine, String... extra) {
        List<String> p = new ArrayList<>(retryProperties(budget));
        p.addAll(List.of(
                "spring.application.name=" + serverName,
                "grpc.server.port=-1",
                "grpc.server.in-process-name=" + serverName,
                "grpc.client.next.address=in-process:" + next,
                "grpc.retry.guard.enabled=" + guard,
                "grpc.retry.engine=" + engine,
                "spring.main.banner-mode=off",
                "logging.level.root=warn"));
        p.addAll(List.of(extra));
        return new SpringApplicationBuilder(Layer.class).web(WebApplicationType.NONE)
                .properties(p.toArray(String[]::new)).run();
    }

    record Result(double cPerRequest, double bPerRequest, double aPerRequest, double guardedAtB, double guardedAtA) {
    }

    /** Runs the chain with {@code n} original requests; B's engine is {@code engineB}. */
    private static Result chain(int n, boolean guard, boolean budget, String engineB) {
        String suffix = UUID.randomUUID().toString();
        String a = "chain-a-" + suffix;
        String b = "chain-b-" + suffix;
        c.reset();
        try (ConfigurableApplicationContext bCtx = layer(b, c.inProcessName(), guard, budget, engineB);
                ConfigurableApplicationContext aCtx = layer(a, b, guard, budget, "interceptor",
                        "grpc.client.entry.address=in-process:" + a)) {
            SimpleServiceGrpc.SimpleServiceBlockingStub entry = SimpleServiceGrpc.newBlockingStub(
                    aCtx.getBean(GrpcChannelFactory.class).createChannel("entry"));
            for (int i = 0; i < n; i++) {
                try {
                    entry.withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(
                            SimpleRequest.newBuilder().setRequestMessage("r" + i).build());
                    throw new AssertionError("C is down");
                } catch (StatusRuntimeException e) {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                }
            }
            return new Result((double) c.arrivalCount() / n,
                    (double) bCtx.getBean(Relay.class).handled.get() / n,
                    (double) aCtx.getBean(Relay.class).handled.get() / n,
                    guarded(bCtx), guarded(aCtx));
        }
    }

    private static double guarded(ConfigurableApplicationContext ctx) {
        Counter counter = ctx.getBean(MeterRegistry.class).find(RetryMeterNames.SERVER_GUARD)
                .tag(RetryMeterNames.TAG_METHOD, UNARY).counter();
        return counter == null ? 0 : counter.count();
    }

    private static void print(String what, Result r) {
        System.out.printf(Locale.ROOT, "chain %-34s C/request %.3f  B/request %.3f  A/request %.3f  guarded B %d, A %d%n",
                what, r.cPerRequest(), r.bPerRequest(), r.aPerRequest(), (int) r.guardedAtB(), (int) r.guardedAtA());
    }

    @Test
    void withoutLimitsTheLayersMultiply() {
        Result r = chain(N_UNLIMITED, false, false, "interceptor");
        print("no limits", r);
        assertThat(r.cPerRequest()).isEqualTo(27.0);
        assertThat(r.bPerRequest()).isEqualTo(9.0);
        assertThat(r.aPerRequest()).isEqualTo(3.0);
        assertThat(r.guardedAtB()).isZero();
    }

    @Test
    void budgetsAtEveryLayerKeepTheProductOfOnePlusRatio() {
        Result r = chain(N, false, true, "interceptor");
        print("budgets 10 %", r);
        assertThat(r.cPerRequest()).isLessThanOrEqualTo(1.331).isGreaterThan(1.25);
        assertThat(r.aPerRequest()).isLessThanOrEqualTo(1.1);
    }

    @Test
    void theGuardLeavesOnlyTheLayerAboveTheFailingServiceRetrying() {
        Result r = chain(N, true, false, "interceptor");
        print("guard", r);
        assertThat(r.cPerRequest()).isEqualTo(3.0);
        assertThat(r.bPerRequest()).as("A did not retry B's guarded answer").isEqualTo(1.0);
        assertThat(r.aPerRequest()).as("the entry client did not retry A's guarded answer").isEqualTo(1.0);
        assertThat(r.guardedAtB()).isEqualTo(N);
        assertThat(r.guardedAtA()).as("A passes the stop on").isEqualTo(N);
    }

    @Test
    void theGuardWithBudgetsComesCloseToOnePlusRatio() {
        Result r = chain(N, true, true, "interceptor");
        print("guard + budgets 10 %", r);
        assertThat(r.cPerRequest()).isLessThanOrEqualTo(1.1).isGreaterThan(1.05);
        assertThat(r.bPerRequest()).isEqualTo(1.0);
    }

    @Test
    void theGuardWorksWhenTheMiddleLayerUsesGrpcJavasOwnRetry() {
        Result r = chain(N, true, false, "native");
        print("guard, B on grpc-java's retry", r);
        assertThat(r.cPerRequest()).isEqualTo(3.0);
        assertThat(r.bPerRequest()).isEqualTo(1.0);
        assertThat(r.aPerRequest()).isEqualTo(1.0);
        assertThat(r.guardedAtB()).isEqualTo(N);

        Result off = chain(N_UNLIMITED, false, false, "native");
        print("no guard, B on grpc-java's retry", off);
        assertThat(off.cPerRequest()).isEqualTo(27.0);
    }
}
