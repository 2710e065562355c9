package io.github.grpcretry.autoconfigure.deadline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.client.inject.GrpcClient;
import net.devh.boot.grpc.server.service.GrpcService;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.core.task.TaskDecorator;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A real application: an HTTP endpoint on embedded Tomcat (random port) calls gRPC service B, which
 * calls C, through the net.devh server and channels (in-process transport) with the starter's
 * auto-configuration. Each layer records the deadline it sees: its time remaining, read between two
 * clock readings. The wire carries the time left when a call starts and the receiver counts it from
 * the stream's arrival, so a layer's time remaining is at most the caller's less the reserve and at
 * least that less the time between the two readings: exact bounds, whatever the load.
 */
@SpringBootTest(classes = DeadlineHttpChainTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
                "grpc.server.port=-1",
                "grpc.server.in-process-name=deadline-http-chain",
                "grpc.client.b.address=in-process:deadline-http-chain",
                "grpc.client.c.address=in-process:deadline-http-chain",
                "grpc.retry.deadline.http.header=X-Request-Timeout-Ms",
                "grpc.retry.deadline.http.max=5s",
                "grpc.retry.deadline.reserve=100ms",
                "spring.reactor.context-propagation=auto"})
class DeadlineHttpChainTest {

    private static final long MS = 1_000_000L;
    private static final String HEADER = "X-Request-Timeout-Ms";

    @LocalServerPort
    int port;

    @Autowired
    Recorder recorder;

    private final HttpClient http = HttpClient.newHttpClient();

    @AfterAll
    static void resetReactor() {
        Hooks.disableAutomaticContextPropagation();
    }

    @BeforeEach
    void clear() {
        recorder.seen.clear();
        recorder.remainingMs.clear();
        recorder.readings.clear();
    }

    private HttpResponse<String> get(String path, String timeoutHeader) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10));
        if (timeoutHeader != null) {
            b.header(HEADER, timeoutHeader);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * {@code to}'s deadline is {@code from}'s less {@code reserveMs}: its time remaining at most
     * {@code from}'s less the reserve (1 ms for grpc-timeout's sub-microsecond rounding), at least that
     * less the time between the two readings.
     */
    private void assertHandedOn(String from, String to, long reserveMs) {
        Reading a = recorder.readings.get(from);
        Reading b = recorder.readings.get(to);
        assertThat(a).as(from).isNotNull();
        assertThat(b).as(to).isNotNull();
        long between = b.after() - a.before();
        assertThat(b.remainingNanos()).as("%s: time remaining against %s's %d ns less %d ms, %d ns between", to, from,
                        a.remainingNanos(), reserveMs, between)
                .isBetween(a.remainingNanos() - reserveMs * MS - between - MS, a.remainingNanos() - reserveMs * MS + MS);
    }

    /** The HTTP layer's time remaining: at most {@code ms}, at least that less the request's own duration. */
    private void assertHttpRemaining(long ms, long before, long after) {
        Reading r = recorder.readings.get("http");
        assertThat(r).isNotNull();
        assertThat(r.remainingNanos()).as("the handler's time left, the request having taken %d ns", after - before)
                .isBetween(ms * MS - (after - before), ms * MS);
    }

    @Test
    void theHttpTimeoutTravelsDownTheChainLessTheReservePerHop() throws Exception {
        long before = System.nanoTime();
        HttpResponse<String> response = get("/chain", "2000");
        long after = System.nanoTime();
        assertThat(response.statusCode()).isEqualTo(200);
        assertHttpRemaining(2000, before, after); // the handler's deadline is the header's timeout
        assertThat(recorder.seen.get("b")).isPresent();
        assertThat(recorder.seen.get("c")).isPresent();
        // B: the HTTP deadline less one reserve; C: B's less another
        assertHandedOn("http", "b", 100);
        assertHandedOn("b", "c", 100);
        assertThat(recorder.remainingMs.get("c")).as("at most the timeout minus two reserves")
                .isLessThanOrEqualTo(2000L - 200L);
    }

    @Test
    void theHttpTimeoutIsClampedToTheMaximum() throws Exception {
        long before = System.nanoTime();
        assertThat(get("/chain", "600000").statusCode()).isEqualTo(200);
        assertHttpRemaining(5000, before, System.nanoTime());
    }

    @Test
    void withoutTheHeaderThereIsNoDeadline() throws Exception {
        assertThat(get("/chain", null).statusCode()).isEqualTo(200);
        assertThat(recorder.seen.get("http")).isEmpty();
        assertThat(recorder.seen.get("c")).isEmpty();
    }

    @Test
    void junkHeaderValuesAreIgnoredNeverA500() throws Exception {
        for (String junk : new String[] {"abc", "-5", "99999999999999999999999", "1.5", "", " ", "0x10", "1e3"}) {
            recorder.seen.clear();
            HttpResponse<String> response = get("/chain", junk);
            assertThat(response.statusCode()).as("header '%s'", junk).isEqualTo(200);
            assertThat(recorder.seen.get("http")).as("header '%s'", junk).isEmpty();
            assertThat(recorder.seen.get("c")).as("header '%s'", junk).isEmpty();
        }
    }

    @Test
    void asyncMethodsCarryTheDeadline() throws Exception {
        assertThat(get("/async", "2000").statusCode()).isEqualTo(200);
        assertThat(recorder.seen.get("c")).as("C reached from an @Async method").isPresent();
        assertHandedOn("http", "c", 100);
    }

    @Test
    void onlyAPoolWithTheTaskDecoratorCarriesTheDeadline() throws Exception {
        assertThat(get("/pool", "2000").statusCode()).isEqualTo(200);
        assertThat(recorder.seen.get("c")).isPresent();
        assertHandedOn("http", "c", 100);

        recorder.seen.clear();
        assertThat(get("/pool-undecorated", "2000").statusCode()).isEqualTo(200);
        assertThat(recorder.seen.get("http")).isPresent();
        assertThat(recorder.seen.get("c")).as("control: the same pool without the decorator").isEmpty();
    }

    @Test
    void aReactorChainCarriesTheDeadline() throws Exception {
        assertThat(get("/reactor", "2000").statusCode()).isEqualTo(200);
        assertThat(recorder.seen.get("c")).isPresent();
        assertHandedOn("http", "c", 100);
    }

    @Autowired
    Front front;

    @Test
    void theGlobalServerInterceptorMapsADownstreamDeadlineFailure() {
        assertThatThrownBy(() -> front.b.withDeadlineAfter(5, TimeUnit.SECONDS).unaryRpc(to("b-impatient")))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).as("not UNKNOWN")
                                .isEqualTo(Status.Code.DEADLINE_EXCEEDED));
    }

    // ---- the application ------------------------------------------------------------------------

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableAsync
    @Import({Recorder.class, Front.class, Chain.class, AsyncCaller.class})
    static class App {
    }

    /** A layer's time remaining, read between two clock readings. */
    record Reading(long before, long remainingNanos, long after) {
    }

    /** The absolute deadline ({@code System.nanoTime()} scale) each layer saw; empty = none. */
    @Component
    static class Recorder {
        final Map<String, Optional<Long>> seen = new ConcurrentHashMap<>();
        /** Time left (ms) each layer saw when it recorded. */
        final Map<String, Long> remainingMs = new ConcurrentHashMap<>();
        final Map<String, Reading> readings = new ConcurrentHashMap<>();

        void record(String layer) {
            Deadline d = Context.current().getDeadline();
            long before = System.nanoTime();
            Long remaining = d == null ? null : d.timeRemaining(TimeUnit.NANOSECONDS);
            long after = System.nanoTime();
            if (remaining != null) {
                remainingMs.put(layer, TimeUnit.NANOSECONDS.toMillis(remaining));
                readings.put(layer, new Reading(before, remaining, after));
            }
            seen.put(layer, Optional.ofNullable(remaining == null ? null : before + remaining));
        }
    }

    static SimpleRequest to(String layer) {
        return SimpleRequest.newBuilder().setRequestMessage(layer).build();
    }

    /** B and C: one service on the gRPC server, the layer chosen by the request. */
    @GrpcService
    static class Chain extends SimpleServiceGrpc.SimpleServiceImplBase {
        @GrpcClient("c")
        SimpleServiceGrpc.SimpleServiceBlockingStub c;

        @Autowired
        Recorder recorder;

        @Override
        public void unaryRpc(SimpleRequest request, StreamObserver<SimpleResponse> observer) {
            String layer = request.getRequestMessage();
            recorder.record(layer);
            if (layer.equals("b")) {
                c.unaryRpc(to("c"));
            } else if (layer.equals("b-impatient")) {
                // the downstream call runs out of time; the exception escapes the handler
                c.withDeadlineAfter(50, TimeUnit.MILLISECONDS).unaryRpc(to("c-slow"));
            } else if (layer.equals("c-slow")) {
                try {
                    Thread.sleep(300); // C's scripted slowness: past the 50 ms deadline B gives it
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            observer.onNext(SimpleResponse.newBuilder().setResponseMessage(layer).build());
            observer.onCompleted();
        }
    }

    @Component
    static class AsyncCaller {
        @GrpcClient("c")
        SimpleServiceGrpc.SimpleServiceBlockingStub c;

        @Async
        public CompletableFuture<String> callC() {
            return CompletableFuture.completedFuture(c.unaryRpc(to("c")).getResponseMessage());
        }
    }

    @RestController
    static class Front {
        @GrpcClient("b")
        SimpleServiceGrpc.SimpleServiceBlockingStub b;

        @GrpcClient("c")
        SimpleServiceGrpc.SimpleServiceBlockingStub c;

        @Autowired
        Recorder recorder;

        @Autowired
        AsyncCaller asyncCaller;

        private final ThreadPoolTaskExecutor decorated = new ThreadPoolTaskExecutor();
        private final ThreadPoolTaskExecutor plain = new ThreadPoolTaskExecutor();

        Front(ObjectProvider<TaskDecorator> decorator) {
            decorated.setTaskDecorator(decorator.getIfUnique());
            decorated.setThreadNamePrefix("decorated-");
            decorated.initialize();
            plain.setThreadNamePrefix("plain-");
            plain.initialize();
        }

        @GetMapping("/chain")
        String chain() {
            recorder.record("http");
            return b.unaryRpc(to("b")).getResponseMessage();
        }

        @GetMapping("/async")
        String async() throws Exception {
            recorder.record("http");
            return asyncCaller.callC().get(5, TimeUnit.SECONDS);
        }

        @GetMapping("/pool")
        String pool() throws Exception {
            recorder.record("http");
            return decorated.submit(() -> c.unaryRpc(to("c")).getResponseMessage()).get(5, TimeUnit.SECONDS);
        }

        @GetMapping("/pool-undecorated")
        String poolUndecorated() throws Exception {
            recorder.record("http");
            return plain.submit(() -> c.unaryRpc(to("c")).getResponseMessage()).get(5, TimeUnit.SECONDS);
        }

        @GetMapping("/reactor")
        String reactor() {
            recorder.record("http");
            return Mono.fromCallable(() -> c.unaryRpc(to("c")).getResponseMessage())
                    .subscribeOn(Schedulers.boundedElastic())
                    .block(Duration.ofSeconds(5));
        }
    }
}
