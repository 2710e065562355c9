package io.github.grpcretry.resilience4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.attempt.EngineTestAccess;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.retry.RetryRegistry;
import io.github.resilience4j.retry.event.RetryEvent;
import io.github.resilience4j.retry.event.RetryOnRetryEvent;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A resilience4j Retry instance governing a gRPC method through the interceptor engine, against a
 * real in-process server, without Spring: attempts, backoff from the interval function, the exception
 * predicate as resilience4j composes it (applied to a StatusRuntimeException with the trailers), and
 * the instance's metrics and events.
 */
class Resilience4jRetryDeciderTest {

    private ScriptedServer server;
    private RetryScheduler scheduler;
    private ManagedChannel channel;
    private RetryingClientInterceptor engine;
    private final List<RetryEvent> events = new CopyOnWriteArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        server = ScriptedServer.start("r4j-decider-" + System.nanoTime());
        scheduler = RetryScheduler.create(1, "r4j-retry");
    }

    @AfterEach
    void tearDown() throws Exception {
        if (channel != null) {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
            assertThat(EngineTestAccess.bufferPool(engine).used()).isZero();
        }
        scheduler.close();
        server.close();
    }

    /** A channel whose methods (no service config at all) are governed by instance "backend" of {@code config}. */
    private Retry connect(RetryConfig config) {
        RetryRegistry registry = RetryRegistry.of(config);
        Retry retry = registry.retry("backend");
        retry.getEventPublisher().onEvent(events::add);
        ChannelRetryConfig channelConfig = ChannelRetryConfig.of("inventory", new ServiceConfig(List.of(), null)).withResilience4jRetry("backend");
        engine = RetryingClientInterceptor.builder(channelConfig)
                .fallbackRetryDecider(new Resilience4jRetryDeciderSource(registry).fallbackFor(channelConfig))
                .scheduler(scheduler)
                .build();
        channel = InProcessChannelBuilder.forName(server.inProcessName()).intercept(engine).build();
        return retry;
    }

    private SimpleServiceGrpc.SimpleServiceBlockingStub stub() {
        return SimpleServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    private static SimpleRequest request(String text) {
        return SimpleRequest.newBuilder().setRequestMessage(text).build();
    }

    private static Status.Code codeOf(Runnable call) {
        try {
            call.run();
            return Status.Code.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode();
        }
    }

    @Test
    void exponentialBackoffGovernsAttemptsAndInstanceCounts() {
        Retry retry = connect(RetryConfig.custom()
                .maxAttempts(4)
                .intervalFunction(IntervalFunction.ofExponentialBackoff(Duration.ofMillis(100), 2.0))
                .retryOnException(new UnavailableStatusPredicate())
                .build());
        server.script(ScriptedServer.failFirst(3, Status.Code.UNAVAILABLE));

        assertThat(stub().unaryRpc(request("a")).getResponseMessage()).isEqualTo("a");

        List<Arrival> arrivals = server.arrivals();
        assertThat(arrivals).extracting(a -> a.previousAttempts).containsExactly(null, 1, 2, 3);
        long[] min = {95, 195, 395};
        for (int i = 1; i < arrivals.size(); i++) {
            long gap = TimeUnit.NANOSECONDS.toMillis(arrivals.get(i).nanoTime - arrivals.get(i - 1).nanoTime);
            assertThat(gap).as("gap before attempt %d", i + 1).isBetween(min[i - 1], min[i - 1] + 1000);
        }
        assertThat(events).extracting(RetryEvent::getEventType).containsExactly(RetryEvent.Type.RETRY,
                RetryEvent.Type.RETRY, RetryEvent.Type.RETRY, RetryEvent.Type.SUCCESS);
        assertThat(events.subList(0, 3)).extracting(e -> ((RetryOnRetryEvent) e).getWaitInterval())
                .containsExactly(Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(400));
        assertThat(events).extracting(RetryEvent::getNumberOfRetryAttempts).containsExactly(1, 2, 3, 3);
        assertThat(events.get(0).getLastThrowable()).isInstanceOfSatisfying(StatusRuntimeException.class,
                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        assertThat(retry.getMetrics().getNumberOfSuccessfulCallsWithRetryAttempt()).isEqualTo(1);
        assertThat(retry.getMetrics().getNumberOfTotalCalls()).isEqualTo(4);

        server.reset();
        server.script(a -> Action.ok());
        stub().unaryRpc(request("b"));
        assertThat(retry.getMetrics().getNumberOfSuccessfulCallsWithoutRetryAttempt()).isEqualTo(1);
    }

    @Test
    void aStatusThePredicateRejectsIsNotRetried() {
        Retry retry = connect(RetryConfig.custom()
                .maxAttempts(3)
                .waitDuration(Duration.ofMillis(10))
                .retryOnException(new UnavailableStatusPredicate())
                .build());
        server.script(ScriptedServer.always(Status.Code.INVALID_ARGUMENT));

        assertThat(codeOf(() -> stub().unaryRpc(request("a")))).isEqualTo(Status.Code.INVALID_ARGUMENT);

        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(events).extracting(RetryEvent::getEventType).containsExactly(RetryEvent.Type.IGNORED_ERROR);
        assertThat(retry.getMetrics().getNumberOfFailedCallsWithoutRetryAttempt()).isEqualTo(1);
    }

    @Test
    void usedUpAttemptsEndTheCallAsFailedWithRetry() {
        Retry retry = connect(RetryConfig.custom()
                .maxAttempts(3)
                .waitDuration(Duration.ofMillis(20))
                .retryOnException(new UnavailableStatusPredicate())
                .build());
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));

        assertThat(codeOf(() -> stub().unaryRpc(request("a")))).isEqualTo(Status.Code.UNAVAILABLE);

        assertThat(server.arrivals()).extracting(a -> a.previousAttempts).containsExactly(null, 1, 2);
        assertThat(events).extracting(RetryEvent::getEventType).containsExactly(RetryEvent.Type.RETRY,
                RetryEvent.Type.RETRY, RetryEvent.Type.ERROR);
        assertThat(retry.getMetrics().getNumberOfFailedCallsWithRetryAttempt()).isEqualTo(1);
    }

    @Test
    void retryAndIgnoreExceptionsComposeAsInResilience4j() {
        // retry-exceptions naming other types only: a StatusRuntimeException is not retried
        Retry onlyIllegalState = connect(RetryConfig.custom()
                .maxAttempts(3)
                .waitDuration(Duration.ofMillis(10))
                .retryExceptions(IllegalStateException.class)
                .build());
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        assertThat(codeOf(() -> stub().unaryRpc(request("a")))).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(onlyIllegalState.getMetrics().getNumberOfFailedCallsWithoutRetryAttempt()).isEqualTo(1);
        channel.shutdownNow();

        // retry-exceptions naming it (through its supertype): retried
        server.reset();
        events.clear();
        connect(RetryConfig.custom()
                .maxAttempts(3)
                .waitDuration(Duration.ofMillis(10))
                .retryExceptions(RuntimeException.class)
                .build());
        assertThat(codeOf(() -> stub().unaryRpc(request("b")))).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).isEqualTo(3);
        channel.shutdownNow();

        // ignore-exceptions wins over resilience4j's retry-everything default
        server.reset();
        events.clear();
        Retry ignoring = connect(RetryConfig.custom()
                .maxAttempts(3)
                .waitDuration(Duration.ofMillis(10))
                .ignoreExceptions(StatusRuntimeException.class)
                .build());
        assertThat(codeOf(() -> stub().unaryRpc(request("c")))).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(events).extracting(RetryEvent::getEventType).containsExactly(RetryEvent.Type.IGNORED_ERROR);
        assertThat(ignoring.getMetrics().getNumberOfFailedCallsWithoutRetryAttempt()).isEqualTo(1);
    }

    @Test
    void thePredicateSeesTheAttemptsTrailers() {
        // retry only failures that carry a grpc-retry-pushback-ms trailer
        connect(RetryConfig.custom()
                .maxAttempts(5)
                .waitDuration(Duration.ofMillis(10))
                .retryOnException(t -> {
                    io.grpc.Metadata trailers = Status.trailersFromThrowable(t);
                    return trailers != null && trailers.containsKey(ScriptedServer.PUSHBACK);
                })
                .build());
        server.script(a -> a.index == 1 ? Action.fail(Status.Code.UNAVAILABLE).pushback("50")
                : Action.fail(Status.Code.UNAVAILABLE));

        assertThatThrownBy(() -> stub().unaryRpc(request("a"))).isInstanceOf(StatusRuntimeException.class);

        assertThat(server.arrivals()).extracting(a -> a.previousAttempts).containsExactly(null, 1);
        assertThat(events).extracting(RetryEvent::getEventType).containsExactly(RetryEvent.Type.RETRY,
                RetryEvent.Type.IGNORED_ERROR);
    }

    @Test
    void aNameTheRegistryDoesNotHoldIsRefused() {
        RetryRegistry registry = RetryRegistry.ofDefaults();
        ChannelRetryConfig channelConfig = ChannelRetryConfig.of("inventory", new ServiceConfig(List.of(), null)).withResilience4jRetry("missing");
        assertThatThrownBy(() -> new Resilience4jRetryDeciderSource(registry).fallbackFor(channelConfig))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("'missing'");
        assertThat(registry.getAllRetries()).as("no instance made on demand").isEmpty();
        ChannelRetryConfig none = ChannelRetryConfig.of("other", new ServiceConfig(List.of(), null));
        assertThat(new Resilience4jRetryDeciderSource(registry).fallbackFor(none)).isNull();
    }
}
