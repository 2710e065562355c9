package io.github.grpcretry.springgrpc;

import static io.github.grpcretry.springgrpc.testing.GrpcClientContext.request;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.fail;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.hang;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.ok;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.metrics.RetryMeterNames;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.springgrpc.testing.GrpcServerContext;
import io.github.grpcretry.springgrpc.testing.RecordingInterceptor;
import io.github.grpcretry.springgrpc.testing.ScriptedService;
import io.grpc.ClientInterceptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.grpc.client.ChannelBuilderOptions;
import org.springframework.grpc.client.GlobalClientInterceptor;

/**
 * Spring Boot's own {@code spring.grpc.client.channel.<name>.service-config} taken over by the engine
 * (and rendered for grpc-java with {@code engine: native}), the order of the interceptors (one
 * observation and one default deadline per call, however many attempts), and how Boot's
 * {@code default.deadline} and {@code grpc.retry.deadline.default-timeout} combine. The server is a
 * Spring gRPC application reached in-process.
 */
class TakeOverAndOrderContextTest {

    static ScriptedService service;
    static GrpcServerContext server;

    static ScriptedService.Action script(String key, int n) {
        if (key.startsWith("first2")) {
            return n < 2 ? fail(Status.Code.UNAVAILABLE) : ok();
        }
        if (key.startsWith("hang")) {
            return hang();
        }
        if (key.startsWith("pushback200")) {
            return fail(Status.Code.UNAVAILABLE, "200");
        }
        return fail(Status.Code.UNAVAILABLE);
    }

    @BeforeAll
    static void start() {
        service = new ScriptedService(TakeOverAndOrderContextTest::script);
        server = GrpcServerContext.start(service);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** Boot's own retry policy and throttling for the in-process channel, nothing under grpc.retry. */
    static String[] bootServiceConfig(String... more) {
        String c = "spring.grpc.client.channel.[" + server.inProcessTarget() + "].service-config.";
        String m = c + "method[0].";
        List<String> p = new java.util.ArrayList<>(List.of(
                m + "name[0].service=grpc.testing.SimpleService",
                m + "retry.max-attempts=4",
                m + "retry.initial-backoff=5ms",
                m + "retry.max-backoff=20ms",
                m + "retry.backoff-multiplier=2",
                m + "retry.retryable-status-codes=UNAVAILABLE",
                c + "retrythrottling.max-tokens=10",
                c + "retrythrottling.token-ratio=0.1"));
        p.addAll(List.of(more));
        return p.toArray(String[]::new);
    }

    static double attempts(MeterRegistry registry, String channel, String kind) {
        return registry.find(RetryMeterNames.ATTEMPTS).tag("client", channel).tag("kind", kind).counters().stream()
                .mapToDouble(Counter::count).sum();
    }

    @Test
    void bootsServiceConfigIsRunByTheEngineNotByGrpcJava() {
        RecordingInterceptor perAttempt = new RecordingInterceptor("per-attempt");
        try (GrpcClientContext client = GrpcClientContext.start(bootServiceConfig())) {
            String channel = server.inProcessTarget();
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(
                    client.channel(channel, ChannelBuilderOptions.defaults().withInterceptors(List.of(perAttempt))));
            StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                    () -> stub.unaryRpc(request("takeover")));
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(service.count("takeover")).isEqualTo(4);
            // The engine made the 4 attempts above the channel's own interceptor: grpc-java retried nothing.
            assertThat(perAttempt.calls()).isEqualTo(4);
            MeterRegistry registry = client.bean(MeterRegistry.class);
            assertThat(attempts(registry, channel, "retry")).isEqualTo(3.0);
            assertThat(attempts(registry, channel, "initial")).isEqualTo(1.0);
            // Boot's retrythrottling is the channel's visible throttle: 10 tokens, 4 failures.
            Gauge tokens = registry.find(RetryMeterNames.TOKENS).tag("client", channel).gauge();
            assertThat(tokens).isNotNull();
            assertThat(tokens.value()).isEqualTo(6.0);
            assertThat(registry.find(RetryMeterNames.TOKENS_MAX).tag("client", channel).gauge().value()).isEqualTo(10.0);
        }
    }

    @Test
    void withTheNativeEngineGrpcJavaMakesTheSameFourAttempts() {
        RecordingInterceptor perAttempt = new RecordingInterceptor("per-attempt");
        try (GrpcClientContext client = GrpcClientContext.start(bootServiceConfig("grpc.retry.engine=native"))) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(client.channel(
                    server.inProcessTarget(), ChannelBuilderOptions.defaults().withInterceptors(List.of(perAttempt))));
            catchThrowableOfType(StatusRuntimeException.class, () -> stub.unaryRpc(request("native")));
            assertThat(service.count("native")).isEqualTo(4);
            // grpc-java retried below every interceptor: the channel's own interceptor saw one call.
            assertThat(perAttempt.calls()).isEqualTo(1);
        }
    }

    @Test
    void retryPropertiesOverlayBootsAndProblemsNameBootsKey() {
        String channel = server.inProcessTarget();
        try (GrpcClientContext client = GrpcClientContext.start(bootServiceConfig(
                "grpc.retry.clients.[" + channel + "].service-config.method[0].name[0].service=grpc.testing.SimpleService",
                "grpc.retry.clients.[" + channel + "].service-config.method[0].retry.max-attempts=2"))) {
            catchThrowableOfType(StatusRuntimeException.class, () -> client.stub(channel).unaryRpc(request("overlay")));
            assertThat(service.count("overlay")).isEqualTo(2);
        }
        Throwable failure = catchThrowableOfType(Throwable.class, () -> GrpcClientContext.start(
                "spring.grpc.client.channel.bad.service-config.method[0].retry.max-attempts=1",
                "spring.grpc.client.channel.bad.service-config.method[0].retry.initial-backoff=10ms",
                "spring.grpc.client.channel.bad.service-config.method[0].retry.max-backoff=20ms",
                "spring.grpc.client.channel.bad.service-config.method[0].retry.backoff-multiplier=2",
                "spring.grpc.client.channel.bad.service-config.method[0].retry.retryable-status-codes=UNAVAILABLE"));
        assertThat(FailureReports.report(failure))
                .contains("spring.grpc.client.channel.bad.service-config.method[0].retry.max-attempts");
    }

    @Test
    void bootsDefaultEntryIsTheBaseOfAChannelWithoutItsOwn() {
        String d = "spring.grpc.client.channel.default.service-config.method[0].retry.";
        RecordingInterceptor perAttempt = new RecordingInterceptor("per-attempt");
        try (GrpcClientContext client = GrpcClientContext.start(d + "max-attempts=3", d + "initial-backoff=5ms",
                d + "max-backoff=10ms", d + "backoff-multiplier=2", d + "retryable-status-codes=UNAVAILABLE")) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(client.channel(
                    server.inProcessTarget(), ChannelBuilderOptions.defaults().withInterceptors(List.of(perAttempt))));
            catchThrowableOfType(StatusRuntimeException.class, () -> stub.unaryRpc(request("default-entry")));
            assertThat(service.count("default-entry")).isEqualTo(3);
            assertThat(perAttempt.calls()).isEqualTo(3);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Resilience4jRetries {
        @Bean
        io.github.resilience4j.retry.RetryRegistry retryRegistry() {
            io.github.resilience4j.retry.RetryRegistry registry = io.github.resilience4j.retry.RetryRegistry.ofDefaults();
            registry.retry("inventory", io.github.resilience4j.retry.RetryConfig.custom().maxAttempts(3)
                    .waitDuration(java.time.Duration.ofMillis(5)).build());
            return registry;
        }
    }

    @Test
    void aResilience4jRetryInstanceDecidesForAChannelThatNamesIt() {
        String channel = server.inProcessTarget();
        try (GrpcClientContext client = GrpcClientContext.start(List.of(Resilience4jRetries.class),
                "grpc.retry.clients.[" + channel + "].resilience4j-retry=inventory")) {
            catchThrowableOfType(StatusRuntimeException.class, () -> client.stub(channel).unaryRpc(request("r4j")));
            assertThat(service.count("r4j")).isEqualTo(3);
        }
        Throwable failure = catchThrowableOfType(Throwable.class, () -> GrpcClientContext.start(
                List.of(Resilience4jRetries.class), "grpc.retry.clients.orders.resilience4j-retry=nosuchretry"));
        assertThat(FailureReports.report(failure)).contains("grpc.retry.clients.orders.resilience4j-retry", "nosuchretry");
    }

    /** A name with no RetryRegistry bean to look it up in is not ignored: start-up stops, naming the property. */
    @Test
    void aResilience4jRetryNameWithoutARetryRegistryStopsStartUp() {
        Throwable failure = catchThrowableOfType(Throwable.class,
                () -> GrpcClientContext.start("grpc.retry.clients.GLOBAL.resilience4j-retry=inventory"));
        assertThat(FailureReports.report(failure)).contains("grpc.retry.clients.GLOBAL.resilience4j-retry", "inventory",
                "no RetryRegistry bean", "declare a RetryRegistry @Bean");
    }

    /** Records at the three levels: a user's global interceptor of the highest precedence, one without order, observations. */
    @Configuration(proxyBeanMethods = false)
    static class Recorders {
        static final RecordingInterceptor FIRST = new RecordingInterceptor("global-first");
        static final RecordingInterceptor UNORDERED = new RecordingInterceptor("global-unordered");
        static final AtomicInteger OBSERVATIONS = new AtomicInteger();

        @Bean
        @GlobalClientInterceptor
        @Order(Ordered.HIGHEST_PRECEDENCE)
        ClientInterceptor globalFirst() {
            return FIRST;
        }

        @Bean
        @GlobalClientInterceptor
        ClientInterceptor globalUnordered() {
            return UNORDERED;
        }

        @Bean
        ObservationHandler<Observation.Context> clientObservations() {
            return new ObservationHandler<>() {
                @Override
                public void onStart(Observation.Context context) {
                    if (context.getName().equals("grpc.client")) { // the call's (the attempts' are grpc.client.attempt)
                        OBSERVATIONS.incrementAndGet();
                    }
                }

                @Override
                public boolean supportsContext(Observation.Context context) {
                    return true;
                }
            };
        }
    }

    @Test
    void oneObservationAndDefaultDeadlinePerCallAcrossAttempts() {
        String channel = server.inProcessTarget();
        String m = "grpc.retry.clients.[" + channel + "].service-config.method[0].retry.";
        RecordingInterceptor perAttempt = new RecordingInterceptor("per-attempt");
        try (GrpcClientContext client = GrpcClientContext.start(List.of(Recorders.class),
                "spring.grpc.client.channel.[" + channel + "].default.deadline=5s",
                m + "max-attempts=3", m + "initial-backoff=5ms", m + "max-backoff=10ms", m + "backoff-multiplier=2",
                m + "retryable-status-codes=UNAVAILABLE")) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(
                    client.channel(channel, ChannelBuilderOptions.defaults().withInterceptors(List.of(perAttempt))));
            Recorders.OBSERVATIONS.set(0);
            Recorders.FIRST.clear();
            Recorders.UNORDERED.clear();
            stub.unaryRpc(request("first2-order"));
            assertThat(service.count("first2-order")).isEqualTo(3);
            assertThat(Recorders.OBSERVATIONS.get()).as("client observations").isEqualTo(1);
            assertThat(Recorders.FIRST.calls()).isEqualTo(1);
            assertThat(Recorders.UNORDERED.calls()).isEqualTo(1);
            assertThat(perAttempt.calls()).isEqualTo(3);
            // Boot's default deadline was set once, above the engine: every attempt carries the same one.
            assertThat(perAttempt.deadlines()).doesNotContain(RecordingInterceptor.NO_DEADLINE);
            assertThat(perAttempt.deadlines().stream().distinct().count()).isEqualTo(1);
            assertThat(perAttempt.deadlines().get(0).timeRemaining(TimeUnit.MILLISECONDS)).isBetween(1000L, 5000L);
            // The user's unordered global interceptor runs per call, outside the engine (it saw the call before Boot's default? no: inside it).
            assertThat(Recorders.UNORDERED.deadlines()).doesNotContain(RecordingInterceptor.NO_DEADLINE);
        }
    }

    static long failAfterMillis(GrpcClientContext client, String channel, String key) {
        long start = System.nanoTime();
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                () -> client.stub(channel).unaryRpc(request(key)));
        assertThat(e).isNotNull();
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    @Test
    void theShorterDefaultDeadlineWinsAndBoundsTheWholeCall() {
        String channel = server.inProcessTarget();
        String m = "grpc.retry.clients.[" + channel + "].service-config.method[0].retry.";
        String[] retry = {m + "max-attempts=5", m + "initial-backoff=5ms", m + "max-backoff=10ms", m + "backoff-multiplier=2",
                m + "retryable-status-codes=UNAVAILABLE"};
        // Boot's 300ms against our 5s, then our 300ms against Boot's 5s: 300ms both times.
        try (GrpcClientContext client = GrpcClientContext.start(concat(retry,
                "spring.grpc.client.channel.[" + channel + "].default.deadline=300ms",
                "grpc.retry.deadline.default-timeout=5s"))) {
            assertThat(failAfterMillis(client, channel, "hang-boot")).isBetween(250L, 2000L);
        }
        try (GrpcClientContext client = GrpcClientContext.start(concat(retry,
                "spring.grpc.client.channel.[" + channel + "].default.deadline=5s",
                "grpc.retry.deadline.default-timeout=300ms"))) {
            assertThat(failAfterMillis(client, channel, "hang-ours")).isBetween(250L, 2000L);
            // Pushback 200ms between attempts: a per-attempt deadline would let all 5 attempts through
            // (about 800 ms); the call's deadline of 300 ms lets 2 (at 0 and 200 ms).
            long took = failAfterMillis(client, channel, "pushback200");
            assertThat(service.count("pushback200")).isEqualTo(2);
            assertThat(took).isLessThan(700L);
        }
    }

    static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
