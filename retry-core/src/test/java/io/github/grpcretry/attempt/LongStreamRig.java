package io.github.grpcretry.attempt;

import io.github.grpcretry.metrics.MicrometerRetryEventListener;
import io.github.grpcretry.observation.DefaultAttemptObservationConvention;
import io.github.grpcretry.observation.ObservationAttemptObserver;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.RetryPolicy;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.micrometer.common.KeyValue;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A server stream keyed by an offset over Netty on loopback (port 0), behind the interceptor engine: the request is
 * {@code "from=N"}, the responses are the offsets {@code "N"}, {@code "N+1"}, ... up to {@link #TOTAL}; what the server
 * does with each attempt is the test's script. The server records each attempt's request, its
 * {@code grpc-previous-rpc-attempts} and whether it saw the client's cancel; the engine's events and meters are
 * recorded too, and {@link #close} checks that no timer is left.
 */
final class LongStreamRig implements AutoCloseable {

    static final int TOTAL = 10;
    static final long WAIT_SECONDS = 20;
    static final Metadata.Key<String> PREVIOUS = Metadata.Key.of("grpc-previous-rpc-attempts",
            Metadata.ASCII_STRING_MARSHALLER);

    /** One attempt as the server sees it. */
    static final class Arrival {
        final int index;
        /** The attempt's number in its call, from its {@code grpc-previous-rpc-attempts} (arrivals may overtake). */
        final int attempt;
        final ServerCall<SimpleRequest, SimpleResponse> call;
        final @Nullable String previousAttempts;
        volatile int from = -1;
        final CountDownLatch cancelled = new CountDownLatch(1);

        Arrival(int index, ServerCall<SimpleRequest, SimpleResponse> call, @Nullable String previousAttempts) {
            this.index = index;
            this.call = call;
            this.previousAttempts = previousAttempts;
            this.attempt = previousAttempts == null ? 1 : Integer.parseInt(previousAttempts) + 1;
        }

        /** Headers, then the offsets from its request on, {@code count} of them at most; true when the stream is done. */
        boolean send(int count) {
            call.sendHeaders(new Metadata());
            int to = Math.min(TOTAL, from + count);
            for (int i = from; i < to; i++) {
                call.sendMessage(SimpleResponse.newBuilder().setResponseMessage(Integer.toString(i)).build());
            }
            return to == TOTAL;
        }

        /** Sends up to {@code count} offsets, then closes OK at the end of the stream, else UNAVAILABLE (a break). */
        void sendThenBreak(int count) {
            call.close(send(count) ? Status.OK : Status.UNAVAILABLE.withDescription("stream broke"), new Metadata());
        }
    }

    final List<Arrival> arrivals = new CopyOnWriteArrayList<>();
    final RecordingEvents events = new RecordingEvents();
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    /** The attempt observations (spans) as they stopped. */
    final List<Observation.Context> spans = new CopyOnWriteArrayList<>();
    private final ObservationRegistry observations = ObservationRegistry.create();
    final RetryScheduler scheduler = RetryScheduler.create(1, "long-stream");
    private final Server server;
    final ManagedChannel channel;
    final RetryingClientInterceptor engine;

    /** {@code script} runs at each attempt's half-close (on the server's executor). */
    LongStreamRig(RetryPolicy policy, ChannelRetryConfig.Streams streams, @Nullable StreamResumption<?, ?> resumption,
            Consumer<Arrival> script) throws IOException, InterruptedException {
        this(Configs.channel(policy), streams, resumption, script);
    }

    /** The same with the channel's configuration ({@code channelConfig}: a hedging policy, a throttle). */
    LongStreamRig(ChannelRetryConfig channelConfig, ChannelRetryConfig.Streams streams,
            @Nullable StreamResumption<?, ?> resumption, Consumer<Arrival> script) throws IOException, InterruptedException {
        warmUp();
        ServerServiceDefinition def = ServerServiceDefinition.builder(Configs.SERVICE)
                .addMethod(Rpc.SERVER_STREAMING, handler(script, true)).addMethod(Rpc.BIDI, handler(script, false)).build();
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(def).build().start();
        observations.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }

            @Override
            public void onStop(Observation.Context context) {
                if (DefaultAttemptObservationConvention.NAME.equals(context.getName())) {
                    spans.add(context);
                }
            }
        });
        ChannelRetryConfig config = channelConfig.withStreams(streams);
        RetryingClientInterceptor.Builder b = RetryingClientInterceptor.builder(config).scheduler(scheduler)
                .throttle(config.serviceConfig().retryThrottling() == null ? null
                        : new io.github.grpcretry.throttle.RetryThrottle(config.serviceConfig().retryThrottling()))
                .eventListener(RetryEventListener.composite(List.of(events, new MicrometerRetryEventListener(meters))))
                .attemptObserver(new ObservationAttemptObserver(observations));
        if (resumption != null) {
            b.streamResumptions(List.of(resumption));
        }
        engine = b.build();
        channel = NettyChannelBuilder.forTarget("127.0.0.1:" + server.getPort()).usePlaintext()
                .defaultServiceConfig(config.serviceConfig().toServiceConfigMap(false)).intercept(engine).build();
        // connected before the test's call: a first attempt's idle time is not the connection's set-up
        RetryEngineTest.waitFor(() -> channel.getState(true) == io.grpc.ConnectivityState.READY);
    }

    private static final java.util.concurrent.atomic.AtomicBoolean WARM = new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * Once per JVM, before the first rig: one whole server stream through the engine over Netty, so that the first
     * test's attempt is not a cold server's and client's first call (class loading, first compilations): on a loaded
     * machine that took over 400 ms, longer than the tests' idle timeout, and cut the first attempt.
     */
    private static void warmUp() throws IOException, InterruptedException {
        if (!WARM.compareAndSet(false, true)) {
            return;
        }
        ServerCallHandler<SimpleRequest, SimpleResponse> oneResponse = (call, headers) -> {
            call.request(1);
            return new ServerCall.Listener<SimpleRequest>() {
                @Override
                public void onHalfClose() {
                    call.sendHeaders(new Metadata());
                    call.sendMessage(SimpleResponse.newBuilder().setResponseMessage("0").build());
                    call.close(Status.OK, new Metadata());
                }
            };
        };
        ServerServiceDefinition def = ServerServiceDefinition.builder(Configs.SERVICE)
                .addMethod(Rpc.SERVER_STREAMING, oneResponse).build();
        Server s = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(def).build().start();
        ChannelRetryConfig config = Configs.channel(policy(10)).withStreams(streams(Duration.ofSeconds(30), 3));
        try (RetryScheduler timers = RetryScheduler.create(1, "long-stream-warm-up")) {
            ManagedChannel ch = NettyChannelBuilder.forTarget("127.0.0.1:" + s.getPort()).usePlaintext()
                    .intercept(RetryingClientInterceptor.builder(config).scheduler(timers)
                            .streamResumptions(List.of(new OffsetResumption())).build()).build();
            try {
                Reader reader = new Reader(1);
                reader.begin(ch.newCall(Rpc.SERVER_STREAMING, CallOptions.DEFAULT));
                reader.await();
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                s.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    /** Records each attempt; runs {@code script} at its half-close, or at its first message. */
    private ServerCallHandler<SimpleRequest, SimpleResponse> handler(Consumer<Arrival> script, boolean atHalfClose) {
        return (call, headers) -> {
            Arrival a;
            synchronized (arrivals) {
                a = new Arrival(arrivals.size(), call, headers.get(PREVIOUS));
                arrivals.add(a);
            }
            call.request(1);
            return new ServerCall.Listener<>() {
                @Override
                public void onMessage(SimpleRequest message) {
                    a.from = Integer.parseInt(message.getRequestMessage().substring("from=".length()));
                    if (!atHalfClose) {
                        script.accept(a);
                    }
                }

                @Override
                public void onHalfClose() {
                    if (atHalfClose) {
                        script.accept(a);
                    }
                }

                @Override
                public void onCancel() {
                    a.cancelled.countDown();
                }
            };
        };
    }

    /** The server's record of the call's attempts, by attempt number. */
    List<Arrival> byAttempt() {
        List<Arrival> out = new ArrayList<>(arrivals);
        out.sort(java.util.Comparator.comparingInt(a -> a.attempt));
        return out;
    }

    /** The offsets the server's attempts were asked from, by attempt number. */
    List<Integer> froms() {
        List<Integer> out = new ArrayList<>();
        for (Arrival a : byAttempt()) {
            out.add(a.from);
        }
        return out;
    }

    List<String> previousAttempts() {
        List<String> out = new ArrayList<>();
        for (Arrival a : byAttempt()) {
            out.add(String.valueOf(a.previousAttempts));
        }
        return out;
    }

    List<AttemptKind> startedKinds() {
        List<AttemptKind> out = new ArrayList<>();
        for (RecordingEvents.Event e : events.ofType("attemptStarted")) {
            out.add(e.kind());
        }
        return out;
    }

    /** The key value {@code key} of every attempt span, in the order they stopped. */
    List<String> spanValues(String key) {
        List<String> out = new ArrayList<>();
        for (Observation.Context c : spans) {
            KeyValue kv = c.getLowCardinalityKeyValue(key);
            kv = kv != null ? kv : c.getHighCardinalityKeyValue(key);
            out.add(kv == null ? null : kv.getValue());
        }
        return out;
    }

    double attemptsMeter(AttemptKind kind) {
        return meters.find("grpc.client.retry.attempts").tag("kind", kind.tagValue()).counters().stream()
                .mapToDouble(c -> c.count()).sum();
    }

    double suppressedMeter(SuppressionReason reason) {
        return meters.find("grpc.client.retry.suppressed").tag("reason", reason.tagValue()).counters().stream()
                .mapToDouble(c -> c.count()).sum();
    }

    /** Starts a server-streaming call from offset 0 read by {@code reader}. */
    Reader start(Reader reader, CallOptions options) {
        return start(Rpc.SERVER_STREAMING, reader, options);
    }

    Reader start(MethodDescriptor<SimpleRequest, SimpleResponse> method, Reader reader, CallOptions options) {
        ClientCall<SimpleRequest, SimpleResponse> call = channel.newCall(method, options);
        Observation parent = Observation.start("grpc.client", observations); // the call's: the attempts' parent
        try (Observation.Scope scope = parent.openScope()) {
            reader.begin(call);
        }
        return reader;
    }

    @Override
    public void close() throws InterruptedException {
        try {
            RetryEngineTest.waitFor(() -> EngineTestAccess.outstandingTimers(scheduler) == 0);
            RetryEngineTest.waitFor(() -> EngineTestAccess.bufferPool(engine).used() == 0); // nothing held in the pool
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            scheduler.close();
        }
    }

    /**
     * The application: asks for {@code batch} responses at start and each time it was served all it asked for (a
     * slow reader at batch 1), never more; records a violation when it is served more than it asked for, or a
     * callback after its close.
     */
    static class Reader extends ClientCall.Listener<SimpleResponse> {
        final int batch;
        final io.github.grpcretry.testing.ContractListener<SimpleResponse> contract;
        final AtomicInteger requested = new AtomicInteger();
        final List<String> responses = new CopyOnWriteArrayList<>();
        final List<String> violations = new CopyOnWriteArrayList<>();
        volatile @Nullable ClientCall<SimpleRequest, SimpleResponse> call;
        final long startNanos = System.nanoTime();

        Reader(int batch) {
            this.batch = batch;
            this.contract = new io.github.grpcretry.testing.ContractListener<>(this);
        }

        void begin(ClientCall<SimpleRequest, SimpleResponse> c) {
            call = c;
            c.start(contract, new Metadata());
            ask(batch);
            c.sendMessage(Rpc.request("from=0"));
            c.halfClose();
        }

        void ask(int n) {
            requested.addAndGet(n);
            java.util.Objects.requireNonNull(call).request(n);
        }

        @Override
        public void onMessage(SimpleResponse message) {
            responses.add(message.getResponseMessage());
            if (responses.size() > requested.get()) {
                violations.add("served " + responses.size() + " of " + requested.get() + " asked for");
            }
            if (responses.size() == requested.get()) {
                served(responses.size());
            }
        }

        /** Served everything asked for: asks for the next batch (a slower reader waits first). */
        void served(int count) {
            ask(batch);
        }

        Status await() throws InterruptedException {
            Status s = contract.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS);
            contract.assertContract();
            return s;
        }

        long elapsedMillis() {
            return TimeUnit.NANOSECONDS.toMillis(contract.closedAtNanos() - startNanos);
        }

        int headers() {
            return contract.headersCount();
        }
    }

    /** A resumption of the offset stream: the request asks from the offset after the last one delivered. */
    static class OffsetResumption implements StreamResumption<SimpleRequest, SimpleResponse> {
        final AtomicInteger resumers = new AtomicInteger();
        final List<String> delivered = new CopyOnWriteArrayList<>();
        volatile boolean refuse;

        @Override
        public MethodDescriptor<SimpleRequest, SimpleResponse> method() {
            return Rpc.SERVER_STREAMING;
        }

        @Override
        public Resumer<SimpleRequest, SimpleResponse> start(SimpleRequest request) {
            resumers.incrementAndGet();
            int first = Integer.parseInt(request.getRequestMessage().substring("from=".length()));
            return new Resumer<>() {
                private int next = first;

                @Override
                public void delivered(SimpleResponse response) {
                    delivered.add(response.getResponseMessage());
                    next = Integer.parseInt(response.getResponseMessage()) + 1;
                }

                @Override
                public @Nullable SimpleRequest resumeRequest() {
                    return refuse ? null : Rpc.request("from=" + next);
                }
            };
        }
    }

    /**
     * A resumption of {@link Rpc#SERVER_STREAMING} that would resume with the request as the application sent it;
     * counts the resumers it made, the responses they were told of and the resume requests they were asked for.
     */
    static final class SameRequestResumption implements StreamResumption<SimpleRequest, SimpleResponse> {
        static final AtomicInteger STARTED = new AtomicInteger();
        static final AtomicInteger DELIVERED = new AtomicInteger();
        static final AtomicInteger ASKED = new AtomicInteger();

        @Override
        public MethodDescriptor<SimpleRequest, SimpleResponse> method() {
            return Rpc.SERVER_STREAMING;
        }

        @Override
        public Resumer<SimpleRequest, SimpleResponse> start(SimpleRequest request) {
            STARTED.incrementAndGet();
            return new Resumer<>() {
                @Override
                public void delivered(SimpleResponse response) {
                    DELIVERED.incrementAndGet();
                }

                @Override
                public SimpleRequest resumeRequest() {
                    ASKED.incrementAndGet();
                    return request;
                }
            };
        }
    }

    static RetryPolicy policy(long backoffMs) {
        return Configs.policy(5, backoffMs, backoffMs, 1, Status.Code.UNAVAILABLE);
    }

    static ChannelRetryConfig.Streams streams(@Nullable Duration idle, int maxResumes) {
        return new ChannelRetryConfig.Streams(idle, maxResumes);
    }
}
