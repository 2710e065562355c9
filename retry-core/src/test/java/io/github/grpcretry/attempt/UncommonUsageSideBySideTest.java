package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.Engines.Engine;
import io.github.grpcretry.attempt.Engines.Transport;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.grpc.CallCredentials;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * ClientCall driven the less common ways (null messages, interceptors below that answer in start, callbacks after a
 * cancel from another thread, blocking stubs, calls started already over, odd marshallers), grpc-java's own retry as
 * the control where it is the reference.
 */
class UncommonUsageSideBySideTest extends UsageRig {

    @RegisterExtension
    static final SideBySideServers SERVERS = new SideBySideServers("uncommon-usage");

    private static final ChannelRetryConfig FAST = Configs.channel(Configs.fast(3));

    static Map<Engine, String> both(Transport t, ChannelRetryConfig config, Function<Arrival, Action> script,
            Scenario scenario, ClientInterceptor... belowOurs) throws Exception {
        return UsageRig.both(SERVERS, t, config, script, scenario, belowOurs);
    }

    // ------------------------------------------------------------------ null messages

    /** A request marshaller that takes null (as a Void or JSON marshaller does): null is the empty request. */
    static final MethodDescriptor<SimpleRequest, SimpleResponse> NULL_TOLERANT = Rpc.UNARY.toBuilder(
            new MethodDescriptor.Marshaller<SimpleRequest>() {
                @Override
                public InputStream stream(SimpleRequest value) {
                    return value == null ? new ByteArrayInputStream(new byte[0])
                            : Rpc.UNARY.getRequestMarshaller().stream(value);
                }

                @Override
                public SimpleRequest parse(InputStream stream) {
                    return Rpc.UNARY.getRequestMarshaller().parse(stream);
                }
            }, Rpc.UNARY.getResponseMarshaller()).build();

    /**
     * sendMessage(null) on a method whose request marshaller takes null: grpc-java's ClientCallImpl and
     * RetriableStream pass the null to the marshaller (no null check), the call succeeds, after a retry too.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void aNullMessageOnAMarshallerThatTakesNull(Transport t) throws Exception {
        Map<Engine, String> seen = both(t, FAST, ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE), (c, server) -> {
            ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(NULL_TOLERANT, CallOptions.DEFAULT);
            Recorder r = new Recorder().start(call, new Metadata());
            call.request(1);
            String sent = thrown(() -> call.sendMessage(null));
            if (!sent.equals("returned")) {
                call.cancel("the application gives up", null);
            } else {
                call.halfClose();
            }
            return "sendMessage(null) " + sent + " | " + r.awaitClose() + " | arrivals " + server.arrivalCount();
        });
        assertThat(seen.get(Engine.NATIVE)).as("grpc-java's")
                .isEqualTo("sendMessage(null) returned | headers; message ; close OK \"null\" | arrivals 2");
        assertOursAsGrpcJavas(seen);
    }

    /**
     * sendMessage(null) on a protobuf method: grpc-java passes the null to the marshaller, whose ProtoInputStream
     * takes a null message as drained: the server reads the empty request and the call ends OK.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void aNullMessageOnAProtobufMethod(Transport t) throws Exception {
        Map<Engine, String> seen = both(t, FAST, a -> Action.ok(), (c, server) -> {
            ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(Rpc.UNARY, CallOptions.DEFAULT);
            Recorder r = new Recorder().start(call, new Metadata());
            call.request(1);
            String sent = thrown(() -> call.sendMessage(null));
            String half = thrown(call::halfClose);
            String closed;
            try {
                closed = r.awaitClose();
            } catch (AssertionError e) {
                call.cancel("cleanup", null);
                closed = "not closed";
            }
            return "sendMessage(null) " + sent.replaceAll(":.*", "") + " | halfClose " + half + " | " + closed;
        });
        assertThat(seen.get(Engine.NATIVE)).as("grpc-java's: protobuf's ProtoInputStream takes null as the empty message")
                .isEqualTo("sendMessage(null) returned | halfClose returned | headers; message ; close OK \"null\"");
        assertOursAsGrpcJavas(seen);
    }

    /**
     * A server answers UNAVAILABLE with the text of grpc-java's own channel shut-down (a service passing on the status of
     * its call below while its channel shuts down); the client's channel is fine. Retried as any UNAVAILABLE by both
     * engines: ours, on a channel built with builder.intercept (no ManagedChannel to ask), tells it from its channel's
     * own close by the server's trailers its attempt received (HostilePeerSideBySideTest does the same over raw HTTP/2).
     */
    @ParameterizedTest
    @CsvSource({"IN_PROCESS,Channel shutdown invoked", "IN_PROCESS,Channel shutdownNow invoked",
            "NETTY,Channel shutdown invoked", "NETTY,Channel shutdownNow invoked"})
    void aServersUnavailableWithTheChannelShutdownTextIsRetried(Transport t, String text) throws Exception {
        Map<Engine, String> seen = both(t, FAST, a -> a.index == 1 ? Action.fail(Status.Code.UNAVAILABLE).described(text)
                : Action.ok(), (c, server) -> sendOne(c.channel().newCall(Rpc.UNARY, CallOptions.DEFAULT), new Recorder(),
                        "a", server));
        assertThat(seen.get(Engine.NATIVE)).as("grpc-java's").endsWith("close OK \"null\" | arrivals 2");
        assertOursAsGrpcJavas(seen);
    }

    // ------------------------------------------------------------------ interceptors below that answer in start()

    /**
     * An auth interceptor below the engine that refuses the first attempt inside start(): headers, then the close,
     * on the caller's thread, never calling super.start(). Ours only (grpc-java has no "below"): the contract, and
     * the figures of callEnded.
     */
    @Test
    void anInterceptorBelowThatAnswersInsideStartThenPassesTheRetry() throws Exception {
        AtomicInteger starts = new AtomicInteger();
        ClientInterceptor refuseFirst = new ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                    CallOptions callOptions, Channel next) {
                return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
                    boolean refused;

                    @Override
                    public void start(Listener<RespT> listener, Metadata headers) {
                        if (starts.incrementAndGet() == 1) {
                            refused = true;
                            listener.onClose(Status.UNAVAILABLE.withDescription("refused in start"), new Metadata());
                            return;
                        }
                        super.start(listener, headers);
                    }

                    @Override
                    public void request(int n) {
                        if (!refused) {
                            super.request(n);
                        }
                    }

                    @Override
                    public void sendMessage(ReqT m) {
                        if (!refused) {
                            super.sendMessage(m);
                        }
                    }

                    @Override
                    public void halfClose() {
                        if (!refused) {
                            super.halfClose();
                        }
                    }

                    @Override
                    public void cancel(String message, Throwable cause) {
                        if (!refused) {
                            super.cancel(message, cause);
                        }
                    }
                };
            }
        };
        ScriptedServer server = SERVERS.server(Transport.IN_PROCESS);
        server.reset();
        server.script(a -> Action.ok());
        try (Engines.Client c = Engines.interceptorClient(server, Transport.IN_PROCESS, FAST, SERVERS.scheduler(),
                refuseFirst)) {
            String seen = sendOne(c.channel().newCall(Rpc.SERVER_STREAMING, CallOptions.DEFAULT), new Recorder(), "a",
                    server);
            assertThat(seen).isEqualTo("headers; message r0; message r1; message r2; close OK \"null\" | arrivals 1");
            RetryEngineTest.waitFor(() -> c.events().callsEnded.get() == 1);
            assertThat(c.events().ofType("callEnded").get(0).attempt()).as("retries").isEqualTo(1);
            assertThat(c.events().attemptsEnded.get()).isEqualTo(2);
        }
    }

    // ------------------------------------------------------------------ channels with directExecutor()

    /** Both engines' channels built with directExecutor() (as unit tests and low-latency clients build them). */
    static Map<Engine, String> bothDirect(Transport t, ChannelRetryConfig config, Function<Arrival, Action> script,
            Scenario scenario) throws Exception {
        Map<Engine, String> seen = new EnumMap<>(Engine.class);
        for (Engine engine : List.of(Engine.NATIVE, Engine.INTERCEPTOR)) {
            ScriptedServer server = SERVERS.server(t);
            server.reset();
            server.script(script);
            RecordingEvents events = new RecordingEvents();
            ManagedChannel ch;
            RetryingClientInterceptor interceptor = null;
            if (engine == Engine.NATIVE) {
                ch = Engines.builder(server, t).directExecutor()
                        .defaultServiceConfig(config.serviceConfig().toServiceConfigMap(true))
                        .enableRetry().maxRetryAttempts(config.maxAttemptsCap()).maxHedgedAttempts(config.maxAttemptsCap())
                        .retryBufferSize(config.retryBufferSize()).perRpcBufferLimit(config.perRpcBufferLimit())
                        .build();
            } else {
                interceptor = RetryingClientInterceptor.builder(config).eventListener(events)
                        .scheduler(SERVERS.scheduler()).build();
                ch = Engines.builder(server, t).directExecutor()
                        .defaultServiceConfig(config.serviceConfig().toServiceConfigMap(false))
                        .intercept(interceptor).build();
            }
            try (Engines.Client c = new Engines.Client(engine, ch, interceptor, events)) {
                try {
                    seen.put(engine, scenario.run(c, server));
                } catch (AssertionError e) {
                    seen.put(engine, "failed: " + e.getMessage().replace('\n', ' '));
                }
            }
        }
        return seen;
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void directExecutorUnaryRetried(Transport t) throws Exception {
        Map<Engine, String> seen = bothDirect(t, FAST, ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE),
                (c, server) -> sendOne(c.channel().newCall(Rpc.UNARY, CallOptions.DEFAULT), new Recorder(), "a", server));
        assertOursAsGrpcJavas(seen);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void directExecutorServerStreamCancelledOnTheSecondMessage(Transport t) throws Exception {
        Map<Engine, String> seen = bothDirect(t, FAST, ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE),
                (c, server) -> {
                    ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(Rpc.SERVER_STREAMING,
                            CallOptions.DEFAULT);
                    Recorder r = new Recorder();
                    AtomicInteger messages = new AtomicInteger();
                    r.hook = name -> {
                        if (name.equals("onMessage") && messages.incrementAndGet() == 2) {
                            call.cancel("enough", null);
                        }
                    };
                    return sendOne(call, r, "a", server);
                });
        // grpc-java's outcome is one of three deliberate differences of docs/differences.md, not compared: over Netty
        // with directExecutor it may have heard the whole answer before the cancel and deliver it ("the application
        // cancels after the server's status reached"), or deliver a message queued behind the one the application
        // cancelled in ("the application cancels while callbacks wait behind one it is still in"); in-process it may
        // never close the call ("a server-streaming call the application cancels from a callback while it has asked
        // for more messages")
        assertThat(seen.get(Engine.NATIVE)).matches("headers; message r0; message r1; (message r2; )?close CANCELLED \"enough\" \\| arrivals 2"
                + "|headers; message r0; message r1; message r2; close OK \"null\" \\| arrivals 2|failed: .*");
        assertThat(seen.get(Engine.INTERCEPTOR))
                .isEqualTo("headers; message r0; message r1; close CANCELLED \"enough\" | arrivals 2");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void directExecutorBidiHalfClosedFromOnMessage(Transport t) throws Exception {
        Map<Engine, String> seen = bothDirect(t, FAST, ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE),
                (c, server) -> {
                    ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(Rpc.BIDI, CallOptions.DEFAULT);
                    Recorder r = new Recorder();
                    AtomicInteger messages = new AtomicInteger();
                    r.hook = name -> {
                        if (name.equals("onMessage") && messages.incrementAndGet() == 2) {
                            call.halfClose();
                        } else if (name.equals("onMessage")) {
                            call.sendMessage(Rpc.request("b"));
                        }
                    };
                    r.start(call, new Metadata());
                    call.request(1);
                    call.sendMessage(Rpc.request("a"));
                    return r.awaitClose() + " | arrivals " + server.arrivalCount();
                });
        assertOursAsGrpcJavas(seen);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void directExecutorCancelFromOnHeaders(Transport t) throws Exception {
        Map<Engine, String> seen = bothDirect(t, FAST, ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE),
                (c, server) -> {
                    ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(Rpc.SERVER_STREAMING,
                            CallOptions.DEFAULT);
                    Recorder r = new Recorder();
                    r.hook = name -> {
                        if (name.equals("onHeaders")) {
                            call.cancel("no thanks", null);
                        }
                    };
                    return sendOne(call, r, "a", server);
                });
        assertThat(seen.get(Engine.NATIVE)).matches("headers; (message r0; (message r1; (message r2; )?)?)?close CANCELLED "
                + "\"no thanks\" \\| arrivals 2"
                + "|headers; message r0; message r1; message r2; close OK \"null\" \\| arrivals 2|failed: .*"); // as above
        assertThat(seen.get(Engine.INTERCEPTOR)).isEqualTo("headers; close CANCELLED \"no thanks\" | arrivals 2");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void directExecutorHedgedThreeAttempts(Transport t) throws Exception {
        ChannelRetryConfig hedged = Configs.channel(Configs.hedged(Configs.hedging(3, 20, Status.Code.UNAVAILABLE)));
        Map<Engine, String> seen = bothDirect(t, hedged, a -> a.index < 3 ? Action.fail(Status.Code.UNAVAILABLE)
                : Action.ok(), (c, server) -> sendOne(c.channel().newCall(Rpc.UNARY, CallOptions.DEFAULT),
                        new Recorder(), "a", server));
        assertOursAsGrpcJavas(seen);
    }

    // ------------------------------------------------------------------ a callback after cancel() returned

    /**
     * The application cancels from its own thread while the engine delivers the response headers on a transport
     * thread: the delivering thread checked that the call was not cancelled, then reports {@code committed} to the
     * event listener (held here until cancel() returned), then calls onHeaders. The library promises that after
     * cancel() returned the application hears only its close (docs/differences.md); the window between the check and
     * the callback is open to any thread scheduling, the listener only holds it open.
     */
    @Test
    void noHeadersAfterCancelReturnedWhileTheCommitIsReported() throws Exception {
        CountDownLatch inCommitted = new CountDownLatch(1);
        CountDownLatch cancelReturned = new CountDownLatch(1);
        RetryEventListener slowCommit = new RetryEventListener() {
            @Override
            public void committed(CallTarget target, int attemptNumber) {
                inCommitted.countDown();
                try {
                    cancelReturned.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        ScriptedServer server = SERVERS.server(Transport.IN_PROCESS);
        server.reset();
        server.script(a -> Action.ok());
        RetryingClientInterceptor engine = RetryingClientInterceptor.builder(FAST).eventListener(slowCommit)
                .scheduler(SERVERS.scheduler()).build();
        ManagedChannel ch = Engines.builder(server, Transport.IN_PROCESS)
                .defaultServiceConfig(FAST.serviceConfig().toServiceConfigMap(false)).intercept(engine).build();
        try (Engines.Client c = new Engines.Client(Engine.INTERCEPTOR, ch, engine, null)) {
            ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(Rpc.UNARY, CallOptions.DEFAULT);
            Recorder r = new Recorder().start(call, new Metadata());
            call.request(1);
            call.sendMessage(Rpc.request("a"));
            call.halfClose();
            assertThat(inCommitted.await(10, TimeUnit.SECONDS)).isTrue();
            call.cancel("bye", null);
            r.events.add("cancel returned");
            cancelReturned.countDown();
            assertThat(r.awaitClose()).isEqualTo("cancel returned; close CANCELLED \"bye\"");
        }
    }

    /**
     * The same window on the pass-through path of a resumable server stream: the resumer's delivered() runs after the
     * engine's check and before onMessage; the application cancels from its thread meanwhile.
     */
    @Test
    void noMessageAfterCancelReturnedWhileTheResumerIsTold() throws Exception {
        CountDownLatch inDelivered = new CountDownLatch(1);
        CountDownLatch cancelReturned = new CountDownLatch(1);
        AtomicInteger delivered = new AtomicInteger();
        StreamResumption<SimpleRequest, SimpleResponse> resumption = new StreamResumption<>() {
            @Override
            public MethodDescriptor<SimpleRequest, SimpleResponse> method() {
                return Rpc.SERVER_STREAMING;
            }

            @Override
            public Resumer<SimpleRequest, SimpleResponse> start(SimpleRequest request) {
                return new Resumer<>() {
                    @Override
                    public void delivered(SimpleResponse response) {
                        if (delivered.incrementAndGet() == 2) {
                            inDelivered.countDown();
                            try {
                                cancelReturned.await(10, TimeUnit.SECONDS);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }
                    }

                    @Override
                    public SimpleRequest resumeRequest() {
                        return request;
                    }
                };
            }
        };
        ChannelRetryConfig config = FAST.withStreams(new ChannelRetryConfig.Streams(null, 3));
        ScriptedServer server = SERVERS.server(Transport.IN_PROCESS);
        server.reset();
        server.script(a -> Action.ok().responses(5));
        RetryingClientInterceptor engine = RetryingClientInterceptor.builder(config)
                .streamResumptions(List.of(resumption)).scheduler(SERVERS.scheduler()).build();
        ManagedChannel ch = Engines.builder(server, Transport.IN_PROCESS)
                .defaultServiceConfig(config.serviceConfig().toServiceConfigMap(false)).intercept(engine).build();
        try (Engines.Client c = new Engines.Client(Engine.INTERCEPTOR, ch, engine, null)) {
            ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(Rpc.SERVER_STREAMING,
                    CallOptions.DEFAULT);
            Recorder r = new Recorder().start(call, new Metadata());
            call.request(1);
            call.sendMessage(Rpc.request("a"));
            call.halfClose();
            assertThat(inDelivered.await(10, TimeUnit.SECONDS)).isTrue();
            call.cancel("bye", null);
            r.events.add("cancel returned");
            cancelReturned.countDown();
            assertThat(r.awaitClose()).isEqualTo("headers; message r0; cancel returned; close CANCELLED \"bye\"");
        }
    }

    // ------------------------------------------------------------------ blocking stubs (ThreadlessExecutor)

    static String outcome(Callable<String> body) {
        try {
            return body.call();
        } catch (StatusRuntimeException e) {
            return "threw " + describe(e.getStatus());
        } catch (StatusException e) {
            return "threw " + describe(e.getStatus());
        } catch (Exception e) {
            return "threw " + e;
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void blockingUnaryRetried(Transport t) throws Exception {
        Map<Engine, String> seen = both(t, FAST, ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE), (c, server) ->
                outcome(() -> io.grpc.stub.ClientCalls.blockingUnaryCall(c.channel(), Rpc.UNARY, CallOptions.DEFAULT,
                        Rpc.request("a")).getResponseMessage()) + " | arrivals " + server.arrivalCount());
        assertOursAsGrpcJavas(seen);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void blockingV2UnaryExhausted(Transport t) throws Exception {
        Map<Engine, String> seen = both(t, FAST, ScriptedServer.always(Status.Code.UNAVAILABLE), (c, server) ->
                outcome(() -> io.grpc.stub.ClientCalls.blockingV2UnaryCall(c.channel(), Rpc.UNARY, CallOptions.DEFAULT,
                        Rpc.request("a")).getResponseMessage()).replaceAll("#\\d", "#n")
                        + " | arrivals " + server.arrivalCount());
        assertOursAsGrpcJavas(seen);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void blockingV2BidiRetried(Transport t) throws Exception {
        Map<Engine, String> seen = both(t, FAST, ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE), (c, server) ->
                outcome(() -> {
                    io.grpc.stub.BlockingClientCall<SimpleRequest, SimpleResponse> call =
                            io.grpc.stub.ClientCalls.blockingBidiStreamingCall(c.channel(), Rpc.BIDI, CallOptions.DEFAULT);
                    List<String> got = new ArrayList<>();
                    got.add("write a " + call.write(Rpc.request("a")));
                    got.add("write b " + call.write(Rpc.request("b")));
                    call.halfClose();
                    while (call.hasNext()) {
                        got.add(call.read().getResponseMessage());
                    }
                    return got.toString();
                }) + " | arrivals " + server.arrivalCount());
        assertOursAsGrpcJavas(seen);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void blockingServerStreamRetried(Transport t) throws Exception {
        Map<Engine, String> seen = both(t, FAST, ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE), (c, server) ->
                outcome(() -> {
                    List<String> got = new ArrayList<>();
                    io.grpc.stub.ClientCalls.blockingServerStreamingCall(c.channel(), Rpc.SERVER_STREAMING,
                            CallOptions.DEFAULT, Rpc.request("a")).forEachRemaining(m -> got.add(m.getResponseMessage()));
                    return got.toString();
                }) + " | arrivals " + server.arrivalCount());
        assertOursAsGrpcJavas(seen);
    }

    /** A blocking unary call whose Context is cancelled from another thread while it waits for its retry. */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void blockingUnaryContextCancelledInBackoff(Transport t) throws Exception {
        ChannelRetryConfig slowBackoff = Configs.channel(Configs.policy(3, 5_000, 5_000, 1, Status.Code.UNAVAILABLE));
        ExecutorService other = Executors.newSingleThreadExecutor();
        try {
            Map<Engine, String> seen = both(t, slowBackoff, ScriptedServer.always(Status.Code.UNAVAILABLE),
                    (c, server) -> {
                        Context.CancellableContext ctx = Context.current().withCancellation();
                        other.execute(() -> {
                            try {
                                RetryEngineTest.waitFor(() -> server.arrivals().size() == 1
                                        && server.arrivals().get(0).closedByServer);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                            ctx.cancel(new IllegalStateException("gone"));
                        });
                        return ctx.call(() -> outcome(() -> io.grpc.stub.ClientCalls.blockingUnaryCall(c.channel(),
                                Rpc.UNARY, CallOptions.DEFAULT, Rpc.request("a")).getResponseMessage()))
                                + " | arrivals " + server.arrivalCount();
                    });
            assertOursAsGrpcJavas(seen);
        } finally {
            other.shutdownNow();
        }
    }

    // ------------------------------------------------------------------ every attempt refused below the retry

    static String credentialsAlwaysFailing(Engines.Client c, ScriptedServer server, MethodDescriptor<SimpleRequest,
            SimpleResponse> method) throws InterruptedException {
        Rpc.unary(c.channel(), CallOptions.DEFAULT, "warm-up"); // connected: no attempt waits for the transport
        server.reset();
        AtomicInteger applied = new AtomicInteger();
        CallCredentials creds = new CallCredentials() {
            @Override
            public void applyRequestMetadata(RequestInfo requestInfo, Executor appExecutor,
                    MetadataApplier applier) {
                applier.fail(Status.UNAVAILABLE.withDescription("credentials refused " + applied.incrementAndGet()));
            }
        };
        ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(method,
                CallOptions.DEFAULT.withCallCredentials(creds));
        // the warm-up's own late hedge may still arrive after the reset: only this call's arrivals are counted
        Metadata.Key<String> probe = Metadata.Key.of("x-probe", Metadata.ASCII_STRING_MARSHALLER);
        Metadata headers = new Metadata();
        headers.put(probe, "credentials");
        Recorder r = new Recorder().start(call, headers);
        call.request(1);
        call.sendMessage(Rpc.request("a"));
        call.halfClose();
        String closed = r.awaitClose();
        long arrivals = server.arrivals().stream().filter(a -> "credentials".equals(a.headers.get(probe))).count();
        return closed + " | arrivals " + arrivals + " | credentials asked " + applied.get();
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void credentialsFailingEveryRetry(Transport t) throws Exception {
        Map<Engine, String> seen = both(t, FAST, a -> Action.ok(),
                (c, server) -> credentialsAlwaysFailing(c, server, Rpc.UNARY));
        assertOursAsGrpcJavas(seen);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void credentialsFailingEveryHedge(Transport t) throws Exception {
        ChannelRetryConfig hedged = Configs.channel(Configs.hedged(Configs.hedging(3, 20, Status.Code.UNAVAILABLE)));
        Map<Engine, String> seen = both(t, hedged, a -> Action.ok(),
                (c, server) -> credentialsAlwaysFailing(c, server, Rpc.UNARY));
        assertOursAsGrpcJavas(seen);
    }

    /**
     * An interceptor below that refuses every attempt inside its start() (the close on the caller's thread): under
     * hedging each non-fatal close sends the next hedge at once, from inside the previous attempt's start. Ours only:
     * one close, after every attempt ended; callEnded's figures.
     */
    @ParameterizedTest
    @ValueSource(longs = {0, 10_000})
    void anInterceptorBelowThatRefusesEveryHedgeInsideStart(long delayMs) throws Exception {
        AtomicInteger starts = new AtomicInteger();
        ClientInterceptor refuseAll = new ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                    CallOptions callOptions, Channel next) {
                return new ClientCall<>() {
                    @Override
                    public void start(Listener<RespT> listener, Metadata headers) {
                        listener.onClose(Status.UNAVAILABLE.withDescription("refused " + starts.incrementAndGet()),
                                new Metadata());
                    }

                    @Override
                    public void request(int n) {
                    }

                    @Override
                    public void cancel(String message, Throwable cause) {
                    }

                    @Override
                    public void halfClose() {
                    }

                    @Override
                    public void sendMessage(ReqT message) {
                    }
                };
            }
        };
        ChannelRetryConfig hedged = Configs.channel(Configs.hedged(Configs.hedging(3, delayMs, Status.Code.UNAVAILABLE)));
        ScriptedServer server = SERVERS.server(Transport.IN_PROCESS);
        server.reset();
        try (Engines.Client c = Engines.interceptorClient(server, Transport.IN_PROCESS, hedged, SERVERS.scheduler(),
                refuseAll)) {
            String seen = sendOne(c.channel().newCall(Rpc.UNARY, CallOptions.DEFAULT), new Recorder(), "a", server);
            assertThat(seen).isEqualTo("close UNAVAILABLE \"refused 3\" | arrivals 0");
            RetryEngineTest.waitFor(() -> c.events().callsEnded.get() == 1);
            assertThat(c.events().attemptsStarted.get()).isEqualTo(3);
            assertThat(c.events().attemptsEnded.get()).isEqualTo(3);
            assertThat(c.events().hedgesPerCall).containsExactly(2);
        }
    }

    // ------------------------------------------------------------------ already over when started

    @ParameterizedTest
    @CsvSource({"IN_PROCESS,cancelled context", "IN_PROCESS,expired deadline",
            "IN_PROCESS,expired context deadline", "NETTY,cancelled context", "NETTY,expired deadline",
            "NETTY,expired context deadline"})
    void startedAlreadyOver(Transport t, String how) throws Exception {
        ChannelRetryConfig config = Configs.channel(Configs.policy(3, 10, 100, 2, Status.Code.UNAVAILABLE,
                Status.Code.DEADLINE_EXCEEDED, Status.Code.CANCELLED));
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        try {
            Map<Engine, String> seen = both(t, config, a -> Action.ok(), (c, server) -> {
                Rpc.unary(c.channel(), CallOptions.DEFAULT, "warm-up"); // the name is resolved
                server.reset();
                Context.CancellableContext ctx = how.equals("cancelled context")
                        ? Context.current().withCancellation()
                        : how.equals("expired context deadline") ? Context.current().withDeadline(
                                Deadline.after(-1, TimeUnit.SECONDS), timer)
                        : Context.current().withCancellation();
                if (how.equals("cancelled context")) {
                    ctx.cancel(new IllegalStateException("over"));
                }
                CallOptions options = how.equals("expired deadline")
                        ? CallOptions.DEFAULT.withDeadline(Deadline.after(-1, TimeUnit.SECONDS))
                        : CallOptions.DEFAULT;
                return ctx.call(() -> {
                    ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(Rpc.UNARY, options);
                    return sendOne(call, new Recorder(), "a", server);
                }).replaceAll("-?[0-9][0-9.]* seconds", "N seconds").replaceAll("[0-9]+ns", "Nns");
            });
            assertOursAsGrpcJavas(seen);
        } finally {
            timer.shutdownNow();
        }
    }

    // ------------------------------------------------------------------ callEnded's figures

    /** A call cancelled in its second backoff: callEnded counts one retry and about what it waited. */
    @Test
    void callEndedFiguresOfACallCancelledInItsSecondBackoff() throws Exception {
        ChannelRetryConfig slowSecond = Configs.channel(Configs.policy(3, 100, 60_000, 600, Status.Code.UNAVAILABLE));
        ScriptedServer server = SERVERS.server(Transport.IN_PROCESS);
        server.reset();
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        try (Engines.Client c = Engines.interceptorClient(server, Transport.IN_PROCESS, slowSecond, SERVERS.scheduler())) {
            long t0 = System.nanoTime(); // before the start: the first attempt may fail, and its backoff begin, inside halfClose
            ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(Rpc.UNARY, CallOptions.DEFAULT);
            Recorder r = new Recorder().start(call, new Metadata());
            call.request(1);
            call.sendMessage(Rpc.request("a"));
            call.halfClose();
            RetryEngineTest.waitFor(() -> server.arrivals().size() == 2 && server.arrivals().get(1).closedByServer
                    && c.events().ofType("retryScheduled").size() == 2);
            call.cancel("bye", null);
            long sinceStart = System.nanoTime() - t0;
            assertThat(r.awaitClose()).isEqualTo("close CANCELLED \"bye\"");
            RetryEngineTest.waitFor(() -> c.events().callsEnded.get() == 1);
            RecordingEvents.Event ended = c.events().ofType("callEnded").get(0);
            assertThat(ended.attempt()).as("retries").isEqualTo(1);
            assertThat(ended.nanos()).as("waited (since the start %d ns; events %s)", sinceStart, c.events().events).isGreaterThan(TimeUnit.MILLISECONDS.toNanos(75))
                    .isLessThanOrEqualTo(sinceStart);
            assertThat(c.events().attemptsStarted.get()).isEqualTo(2);
            assertThat(c.events().attemptsEnded.get()).isEqualTo(2);
        }
    }

    /** A hedged call cancelled while it waits for its second hedge: callEnded counts no hedge. */
    @Test
    void callEndedFiguresOfAHedgedCallCancelledBeforeItsFirstHedge() throws Exception {
        ChannelRetryConfig hedged = Configs.channel(Configs.hedged(Configs.hedging(3, 60_000, Status.Code.UNAVAILABLE)));
        ScriptedServer server = SERVERS.server(Transport.IN_PROCESS);
        server.reset();
        server.script(a -> Action.ok().delay(60_000));
        try (Engines.Client c = Engines.interceptorClient(server, Transport.IN_PROCESS, hedged, SERVERS.scheduler())) {
            ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(Rpc.UNARY, CallOptions.DEFAULT);
            Recorder r = new Recorder().start(call, new Metadata());
            call.request(1);
            call.sendMessage(Rpc.request("a"));
            call.halfClose();
            RetryEngineTest.waitFor(() -> server.arrivals().size() == 1 && server.arrivals().get(0).halfClosed);
            call.cancel("bye", null);
            assertThat(r.awaitClose()).isEqualTo("close CANCELLED \"bye\"");
            RetryEngineTest.waitFor(() -> c.events().callsEnded.get() == 1 && c.events().attemptsEnded.get() == 1);
            assertThat(c.events().hedgesPerCall).containsExactly(0);
            assertThat(c.events().ofType("callEnded").get(0).nanos()).as("waited").isZero();
            assertThat(c.events().ofType("callEnded").get(0).code()).isEqualTo(Status.Code.CANCELLED);
        }
    }

    // ------------------------------------------------------------------ response marshallers on a server stream

    /** r1 parses to null (a "null-looking" payload), r2 cannot be parsed. */
    static final MethodDescriptor<SimpleRequest, SimpleResponse> ODD_PARSE = Rpc.SERVER_STREAMING.toBuilder(
            Rpc.SERVER_STREAMING.getRequestMarshaller(), new MethodDescriptor.Marshaller<SimpleResponse>() {
                @Override
                public InputStream stream(SimpleResponse value) {
                    return Rpc.SERVER_STREAMING.getResponseMarshaller().stream(value);
                }

                @Override
                public SimpleResponse parse(InputStream stream) {
                    SimpleResponse r = Rpc.SERVER_STREAMING.getResponseMarshaller().parse(stream);
                    if (r.getResponseMessage().equals("r1")) {
                        return null;
                    }
                    if (r.getResponseMessage().equals("r2")) {
                        throw new IllegalArgumentException("cannot parse r2");
                    }
                    return r;
                }
            }).build();

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aServerStreamWithANullAndAnUnparsableResponseAfterARetry(Transport t) throws Exception {
        ChannelRetryConfig config = Configs.channel(Configs.policy(3, 10, 100, 2, Status.Code.UNAVAILABLE,
                Status.Code.CANCELLED));
        Map<Engine, String> seen = both(t, config, ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE), (c, server) -> {
            ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(ODD_PARSE, CallOptions.DEFAULT);
            Recorder r = new Recorder() {
                @Override
                public void onMessage(SimpleResponse message) {
                    events.add("message " + (message == null ? "null" : message.getResponseMessage()));
                    call.request(1);
                }
            };
            return sendOne(call, r, "a", server);
        });
        assertOursAsGrpcJavas(seen);
    }
}
