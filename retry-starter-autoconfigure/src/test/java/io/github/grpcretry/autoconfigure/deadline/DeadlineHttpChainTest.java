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
 * auto-configuration. Each layer records the absolute deadline it sees.
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
    }

    private HttpResponse<String> get(String path, String timeoutHeader) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10));
        if (timeoutHeader != null) {
            b.header(HEADER, timeoutHeader);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private long ms(String from, String to) {
        return (recorder.seen.get(from).orElseThrow() - recorder.seen.get(to).orElseThrow()) / MS;
    }

    @Test
    void theHttpTimeoutTravelsDownTheChainLessTheReservePerHop() throws Exception {
        HttpResponse<String> response = get("/chain", "2000");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(recorder.remainingMs.get("http")).as("the handler's deadline is the header's timeout")
                .isBetween(1500L, 2000L);
        assertThat(recorder.seen.get("b")).isPresent();
        assertThat(recorder.seen.get("c")).isPresent();
        // B: the HTTP deadline less one reserve; C: B's less another (give or take transport time: the
        // wire carries the time left when a call starts, so a call that waits for a connection arrives late)
        assertThat(ms("http", "b")).isBetween(80L, 400L);
        assertThat(ms("b", "c")).isBetween(80L, 400L);
        assertThat(recorder.remainingMs.get("c")).as("at most the timeout minus two reserves")
                .isLessThanOrEqualTo(2000L - 200L);
    }

    @Test
    void theHttpTimeoutIsClampedToTheMaximum() throws Exception {
        assertThat(get("/chain", "600000").statusCode()).isEqualTo(200);
        assertThat(recorder.remainingMs.get("http")).isBetween(4500L, 5000L);
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
        assertThat(ms("http", "c")).isBetween(80L, 400L);
    }

    @Test
    void aThreadPoolWithTheTaskDecoratorCarriesTheDeadlineAndOneWithoutDoesNot() throws Exception {
        assertThat(get("/pool", "2000").statusCode()).isEqualTo(200);
        assertThat(recorder.seen.get("c")).isPresent();
        assertThat(ms("http", "c")).isBetween(80L, 400L);

        recorder.seen.clear();
        assertThat(get("/pool-undecorated", "2000").statusCode()).isEqualTo(200);
        assertThat(recorder.seen.get("http")).isPresent();
        assertThat(recorder.seen.get("c")).as("control: the same pool without the decorator").isEmpty();
    }

    @Test
    void aReactorChainCarriesTheDeadline() throws Exception {
        assertThat(get("/reactor", "2000").statusCode()).isEqualTo(200);
        assertThat(recorder.seen.get("c")).isPresent();
        assertThat(ms("http", "c")).isBetween(80L, 400L);
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

    /** The absolute deadline ({@code System.nanoTime()} scale) each layer saw; empty = none. */
    @Component
    static class Recorder {
        final Map<String, Optional<Long>> seen = new ConcurrentHashMap<>();
        /** Time left (ms) each layer saw when it recorded. */
        final Map<String, Long> remainingMs = new ConcurrentHashMap<>();

        void record(String layer) {
            Deadline d = Context.current().getDeadline();
            if (d != null) {
                remainingMs.put(layer, d.timeRemaining(TimeUnit.MILLISECONDS));
            }
            seen.put(layer, Optional.ofNullable(d == null ? null : System.nanoTime() + d.timeRemaining(TimeUnit.NANOSECONDS)));
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
                    Thread.sleep(300);
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
