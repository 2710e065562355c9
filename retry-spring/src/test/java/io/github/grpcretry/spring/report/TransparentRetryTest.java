package io.github.grpcretry.spring.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.metrics.MicrometerRetryEventListener;
import io.github.grpcretry.observation.AttemptObservationContext;
import io.github.grpcretry.observation.ObservationAttemptObserver;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.spring.channel.ChannelSetup;
import io.github.grpcretry.spring.channel.StreamResumptions;
import io.github.grpcretry.testing.RefusingHttp2Server;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A stream refused at the HTTP/2 level ({@code RST_STREAM REFUSED_STREAM}) over Netty on loopback: grpc-java
 * sends it again transparently, and both engines count it in {@code grpc.client.call.transparent_retries}
 * (tagged with the target grpc-java canonicalized), apart from the retry that follows a real failure; the
 * interceptor engine also shows it on the attempt's observation.
 */
class TransparentRetryTest {

    private static final String UNARY = "grpc.testing.SimpleService/UnaryRpc";

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final RetryStatistics stats = new RetryStatistics();
    private final List<AttemptObservationContext> attempts = new CopyOnWriteArrayList<>();
    private final List<String> attemptEvents = new CopyOnWriteArrayList<>();
    private final ObservationRegistry observations = ObservationRegistry.create();
    private ManagedChannel channel;

    TransparentRetryTest() {
        observations.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }

            @Override
            public void onEvent(Observation.Event event, Observation.Context context) {
                if (context instanceof AttemptObservationContext) {
                    attemptEvents.add(event.getName());
                }
            }

            @Override
            public void onStop(Observation.Context context) {
                if (context instanceof AttemptObservationContext a) {
                    attempts.add(a);
                }
            }
        });
    }

    @AfterEach
    void closeChannel() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static ChannelRetryConfig config() {
        RetryPolicy retry = new RetryPolicy(3, Duration.ofMillis(10), Duration.ofMillis(20), 2,
                Set.of(Status.Code.UNAVAILABLE), null);
        MethodConfig method = new MethodConfig(List.of(MethodName.of("grpc.testing.SimpleService", null)),
                null, null, null, null, retry, null);
        return ChannelRetryConfig.of("inventory", new ServiceConfig(List.of(method), null));
    }

    /** Refuses stream 1 (re-sent transparently as stream 2), fails stream 2 UNAVAILABLE, answers stream 3. */
    private static void refuseThenFailThenAnswer(RefusingHttp2Server server) {
        server.script(n -> switch (n) {
            case 1 -> new RefusingHttp2Server.Refuse();
            case 2 -> new RefusingHttp2Server.Fail(Status.Code.UNAVAILABLE);
            default -> new RefusingHttp2Server.Ok();
        });
    }

    private void call(RefusingHttp2Server server, ChannelSetup.Engine engine) {
        ChannelRetryConfig config = config();
        NettyChannelBuilder builder = NettyChannelBuilder.forTarget(server.target()).usePlaintext();
        ChannelSetup.configure(builder, config, engine);
        ChannelSetup.interceptWithTarget(builder, "inventory", target -> ChannelSetup.engineInterceptor(config,
                engine, new RetryLimiterRegistry(),
                RetryEventListener.composite(List.of(new MicrometerRetryEventListener(meters), stats)), null, List.of(),
                new ObservationAttemptObserver(observations), null, null, target, StreamResumptions.NONE));
        channel = builder.build();
        Observation call = Observation.start("call", observations);
        try (Observation.Scope scope = call.openScope()) {
            SimpleServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .unaryRpc(SimpleRequest.getDefaultInstance());
        } finally {
            call.stop();
        }
        assertThat(server.streams()).isEqualTo(3);
        await().atMost(Duration.ofSeconds(5)).until(() -> stats.counts("inventory").calls() == 1
                && meters.find("grpc.client.call.transparent_retries").summary() != null);
        String target = "dns:///" + server.target();
        DistributionSummary transparent = meters.get("grpc.client.call.transparent_retries")
                .tags("grpc.method", UNARY, "grpc.target", target).summary();
        assertThat(transparent.count()).isEqualTo(1);
        assertThat(transparent.totalAmount()).isEqualTo(1.0);
        DistributionSummary retries = meters.get("grpc.client.call.retries")
                .tags("grpc.method", UNARY, "grpc.target", target).summary();
        assertThat(retries.totalAmount()).isEqualTo(1.0);
        assertThat(stats.counts("inventory").attempts()).isEqualTo(2);
    }

    @Test
    void interceptorEngineCountsItAndMarksTheAttemptSpan() throws Exception {
        try (RefusingHttp2Server server = new RefusingHttp2Server()) {
            refuseThenFailThenAnswer(server);
            call(server, ChannelSetup.Engine.INTERCEPTOR);

            await().atMost(Duration.ofSeconds(5)).until(() -> attempts.size() == 2);
            AttemptObservationContext first = attempts.stream().filter(a -> a.getAttemptNumber() == 1).findFirst()
                    .orElseThrow();
            assertThat(first.getTransparentRetries()).isEqualTo(1);
            assertThat(first.getLowCardinalityKeyValue("transparent-retry").getValue()).isEqualTo("true");
            assertThat(first.getHighCardinalityKeyValue("grpc.retry.transparent_retries").getValue()).isEqualTo("1");
            AttemptObservationContext second = attempts.stream().filter(a -> a.getAttemptNumber() == 2).findFirst()
                    .orElseThrow();
            assertThat(second.getTransparentRetries()).isZero();
            assertThat(second.getLowCardinalityKeyValue("transparent-retry").getValue()).isEqualTo("false");
            assertThat(attemptEvents).containsExactly("transparent-retry");
        }
    }

    @Test
    void nativeEngineCountsItApartFromRetries() throws Exception {
        try (RefusingHttp2Server server = new RefusingHttp2Server()) {
            refuseThenFailThenAnswer(server);
            call(server, ChannelSetup.Engine.NATIVE);
        }
    }
}
