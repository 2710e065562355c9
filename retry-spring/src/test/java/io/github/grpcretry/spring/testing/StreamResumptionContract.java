package io.github.grpcretry.spring.testing;

import static io.github.grpcretry.testing.Texts.occurrences;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.github.grpcretry.attempt.StreamResumption;
import io.github.grpcretry.spring.report.RetryReport;
import io.grpc.Channel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.context.refresh.ContextRefresher;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * {@link StreamResumption} beans on a Spring Boot line, the cases both lines share: a bean reaches the engine of a
 * channel the line's factory builds, and a server stream that breaks resumes end to end (also after a run-time
 * reload rebuilt the channel's engine); the endpoint shows it per channel; a bean for a method that is not
 * server-streaming, or two beans for one method, stop start-up with the bean named; the native engine warns once
 * and leaves the stream to end. The server is a real Netty server on 127.0.0.1 whose
 * {@code ServerStreamingRpc} streams the offsets {@code from} to {@value #TOTAL} - 1 ({@code from} is the
 * request's message) and breaks the stream with UNAVAILABLE before every offset that is a multiple of
 * {@value #BREAK_EVERY} (except an attempt's first). Each line's {@code StreamResumptionContextTest} supplies the
 * application.
 */
@ExtendWith(OutputCaptureExtension.class)
public abstract class StreamResumptionContract {

    /** Messages in the stream. */
    public static final int TOTAL = 10;
    /** The server breaks the stream before every offset that is a multiple of this. */
    public static final int BREAK_EVERY = 3;
    /** The channel the cases configure ({@link RefreshScenario#CHANNEL}: its policy retries UNAVAILABLE). */
    protected static final String CHANNEL = RefreshScenario.CHANNEL;
    static final String METHOD = SimpleServiceGrpc.getServerStreamingRpcMethod().getFullMethodName();

    @TempDir
    Path dir;

    private Server server;
    /** The {@code from} of every attempt the server saw, in order: the server's record. */
    private final List<Integer> attempts = new CopyOnWriteArrayList<>();

    /**
     * Starts the line's application with these properties ({@code key=value}) and these classes registered as
     * beans.
     */
    protected abstract ConfigurableApplicationContext start(List<String> properties, List<Class<?>> beans);

    /** The properties that make the line's channel {@code channel} go to {@code host:port} in plaintext. */
    protected abstract List<String> channelProperties(String channel, String hostAndPort);

    /** The channel {@code channel} as the line's channel factory builds it. */
    protected abstract Channel channel(ConfigurableApplicationContext context, String channel);

    /** What the line's registered FailureAnalyzers make of {@code failure}: description, "---", action. */
    protected abstract String report(Throwable failure);

    /** A builder of the line's Netty server on 127.0.0.1, an ephemeral port. */
    protected abstract ServerBuilder<?> loopbackServer();

    /** Resumes {@code ServerStreamingRpc} after the last offset it delivered. */
    public static class OffsetResumption implements StreamResumption<SimpleRequest, SimpleResponse> {

        @Override
        public MethodDescriptor<SimpleRequest, SimpleResponse> method() {
            return SimpleServiceGrpc.getServerStreamingRpcMethod();
        }

        @Override
        public Resumer<SimpleRequest, SimpleResponse> start(SimpleRequest request) {
            return new Resumer<>() {
                private int next = offset(request.getRequestMessage());

                @Override
                public void delivered(SimpleResponse response) {
                    next = Integer.parseInt(response.getResponseMessage()) + 1;
                }

                @Override
                public SimpleRequest resumeRequest() {
                    return SimpleRequest.newBuilder().setRequestMessage(Integer.toString(next)).build();
                }
            };
        }
    }

    /** A second resumption of the same method. */
    public static class SecondOffsetResumption extends OffsetResumption {
    }

    /** A resumption that names a unary method. */
    public static class UnaryResumption implements StreamResumption<SimpleRequest, SimpleResponse> {

        @Override
        public MethodDescriptor<SimpleRequest, SimpleResponse> method() {
            return SimpleServiceGrpc.getUnaryRpcMethod();
        }

        @Override
        public Resumer<SimpleRequest, SimpleResponse> start(SimpleRequest request) {
            throw new AssertionError("a unary call is never resumed");
        }
    }

    static int offset(String message) {
        return message.isEmpty() ? 0 : Integer.parseInt(message);
    }

    @BeforeEach
    void startServer() throws IOException {
        server = loopbackServer()
                .addService(new SimpleServiceGrpc.SimpleServiceImplBase() {
                    @Override
                    public void serverStreamingRpc(SimpleRequest request, StreamObserver<SimpleResponse> responses) {
                        int from = offset(request.getRequestMessage());
                        attempts.add(from);
                        for (int o = from; o < TOTAL; o++) {
                            if (o != from && o % BREAK_EVERY == 0) {
                                responses.onError(Status.UNAVAILABLE.withDescription("broken before " + o)
                                        .asRuntimeException());
                                return;
                            }
                            responses.onNext(SimpleResponse.newBuilder().setResponseMessage(Integer.toString(o)).build());
                        }
                        responses.onCompleted();
                    }
                }).build().start();
    }

    @AfterEach
    void stopServer() throws InterruptedException {
        server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }

    private ConfigurableApplicationContext start(String maxAttempts, List<String> more, List<Class<?>> beans) {
        Path file = RefreshScenario.write(dir, RefreshScenario.policy(maxAttempts));
        List<String> properties = new ArrayList<>(channelProperties(CHANNEL, "127.0.0.1:" + server.getPort()));
        properties.add("spring.config.import=file:" + file);
        properties.addAll(more);
        return start(properties, beans);
    }

    /** The offsets one stream delivered, in order, and the status it ended with (null: it completed). */
    record Received(List<Integer> offsets, Status.@Nullable Code ended) {
    }

    private Received stream(ConfigurableApplicationContext context) {
        List<Integer> offsets = new ArrayList<>();
        Iterator<SimpleResponse> it = SimpleServiceGrpc.newBlockingStub(channel(context, CHANNEL))
                .withDeadlineAfter(30, TimeUnit.SECONDS).serverStreamingRpc(SimpleRequest.getDefaultInstance());
        try {
            it.forEachRemaining(r -> offsets.add(Integer.parseInt(r.getResponseMessage())));
            return new Received(offsets, null);
        } catch (StatusRuntimeException e) {
            return new Received(offsets, e.getStatus().getCode());
        }
    }

    private static @Nullable Object shownResumptions(ConfigurableApplicationContext context) {
        return context.getBean(RetryReport.class).endpoint(CHANNEL).get("streamResumptions");
    }

    /** One stream through the channel: all offsets, each once in order, from 4 attempts; the endpoint shows the bean. */
    private void assertResumedWhole(ConfigurableApplicationContext context) {
        attempts.clear();
        Received received = stream(context);
        assertThat(received.ended()).isNull();
        assertThat(received.offsets()).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
        assertThat(attempts).containsExactly(0, 3, 6, 9);
        assertThat(shownResumptions(context)).isEqualTo(Map.of(METHOD, OffsetResumption.class.getName()));
    }

    @Test
    public void aStreamResumptionBeanResumesABrokenStreamAndTheEndpointShowsIt() {
        try (ConfigurableApplicationContext context = start("2", List.of(), List.of(OffsetResumption.class))) {
            assertResumedWhole(context);
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    public void aReloadThatRebuildsTheChannelsEngineKeepsTheResumptions() {
        try (ConfigurableApplicationContext context = start("2", List.of(), List.of(OffsetResumption.class))) {
            assertResumedWhole(context);
            RefreshScenario.write(dir, RefreshScenario.policy("4"));
            assertThat(context.getBean(ContextRefresher.class).refresh()).contains(RefreshScenario.MAX_ATTEMPTS_KEY);
            // applied: the channel runs an engine built again for the new policy
            assertThat((Map<String, Object>) context.getBean(RetryReport.class).endpoint(CHANNEL).get("lastReload"))
                    .containsEntry("outcome", "applied");
            assertResumedWhole(context);
        }
    }

    @Test
    public void withoutABeanABrokenStreamEndsWithTheBreaksStatus() {
        try (ConfigurableApplicationContext context = start("2", List.of(), List.of())) {
            Received received = stream(context);
            assertThat(received.ended()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(received.offsets()).containsExactly(0, 1, 2);
            assertThat(attempts).containsExactly(0);
            assertThat(shownResumptions(context)).isNull();
        }
    }

    @Test
    public void aBeanForAUnaryMethodStopsStartUpNamingTheBean() {
        Throwable failure = catchThrowable(() -> start("2", List.of(), List.of(UnaryResumption.class)).close());
        assertThat(failure).as("start-up fails").isNotNull();
        String unary = SimpleServiceGrpc.getUnaryRpcMethod().getFullMethodName();
        assertThat(report(failure)).contains(
                "Property: StreamResumption bean '",
                "(" + UnaryResumption.class.getName() + ")",
                "Value:    " + unary + " (UNARY)",
                "Reason:   a StreamResumption applies only to a server-streaming method (one request describes the"
                        + " whole stream, so a new request can describe what remains of it); " + unary + " is UNARY",
                "return a server-streaming method's descriptor from method(), or remove the bean");
    }

    @Test
    public void twoBeansForOneMethodStopStartUpNamingBoth() {
        Throwable failure = catchThrowable(() -> start("2", List.of(),
                List.of(OffsetResumption.class, SecondOffsetResumption.class)).close());
        assertThat(failure).as("start-up fails").isNotNull();
        assertThat(report(failure)).contains("(" + OffsetResumption.class.getName() + ") and StreamResumption bean '",
                "(" + SecondOffsetResumption.class.getName() + ")", "Value:    " + METHOD,
                "Reason:   two StreamResumption beans for one method: a broken stream is continued by one resumer",
                "keep one StreamResumption bean for " + METHOD);
    }

    @Test
    public void withTheNativeEngineABeanWarnsOnceAndTheStreamEnds(CapturedOutput output) {
        try (ConfigurableApplicationContext context = start("2", List.of("grpc.retry.engine=native"),
                List.of(OffsetResumption.class))) {
            Received received = stream(context);
            assertThat(received.ended()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(received.offsets()).containsExactly(0, 1, 2);
            assertThat(shownResumptions(context)).isEqualTo(RetryReport.NOT_APPLIED_NATIVE);
        }
        assertThat(occurrences(output.getOut() + output.getErr(), "StreamResumption beans for " + METHOD
                + " are not applied: grpc.retry.engine=native (grpc-java's own retry) has no stream resumption, so a"
                + " server stream that breaks after its first response ends with the break's status; resumption"
                + " needs grpc.retry.engine=interceptor")).isEqualTo(1);
    }
}
