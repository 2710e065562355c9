package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.Engines.Client;
import io.github.grpcretry.attempt.Engines.Engine;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Error;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Headers;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The engine driven over Netty against a raw HTTP/2 server that sends what a grpc-java server never
 * would (RST_STREAM codes, hostile pushback values, headers the server should not send back), grpc-java's own retry as
 * the control.
 */
class HostilePeerSideBySideTest {

    static HostileHttp2Server server;
    static RetryScheduler scheduler;

    @BeforeAll
    static void up() throws Exception {
        server = new HostileHttp2Server();
        scheduler = RetryScheduler.create(1, "hostile-peer");
    }

    @AfterAll
    static void down() {
        server.close();
        assertThat(EngineTestAccess.outstandingTimers(scheduler)).isZero();
        scheduler.close();
    }

    @BeforeEach
    void clean() {
        server.reset();
    }

    /** A client of either engine on a Netty channel to {@code target}. */
    static Client client(Engine engine, String target, ChannelRetryConfig config) {
        NettyChannelBuilder b = NettyChannelBuilder.forTarget(target).usePlaintext();
        return engine == Engine.NATIVE ? Engines.nativeClient(b, config) : Engines.interceptorClient(b, config, scheduler);
    }

    /** The first stream answers as {@code first} does, every later one plainly OK. */
    static HostileHttp2Server.Script firstThenOk(Consumer<HostileHttp2Server.Reply> first) {
        return (n, req, r) -> {
            if (n == 1) {
                first.accept(r);
            } else {
                r.ok("ok");
            }
        };
    }

    /** A trailers-only UNAVAILABLE with the text of grpc-java's own channel shut-down. */
    static final Http2Headers SHUTDOWN_TEXT = HostileHttp2Server.status(14, "grpc-message", "Channel%20shutdown%20invoked");

    interface Scenario {
        String run(Client c) throws Exception;
    }

    static Map<Engine, String> both(ChannelRetryConfig config, HostileHttp2Server.Script script, Scenario s)
            throws Exception {
        Map<Engine, String> seen = new EnumMap<>(Engine.class);
        for (Engine e : List.of(Engine.NATIVE, Engine.INTERCEPTOR)) {
            server.reset();
            server.script(script);
            try (Client c = client(e, server.target(), config)) {
                try {
                    seen.put(e, s.run(c));
                } catch (AssertionError err) {
                    seen.put(e, "failed: " + err.getMessage().replace('\n', ' '));
                }
            }
        }
        return seen;
    }

    /** One unary call; what the application saw (headers' previous-attempts value, messages, close) and the streams. */
    static String unary(Client c, CallOptions options) throws Exception {
        UsageRig.Recorder r = new UsageRig.Recorder() {
            @Override
            public void onHeaders(Metadata headers) {
                Iterable<String> v = headers.getAll(RetryingCall.PREVIOUS_ATTEMPTS);
                List<String> l = new java.util.ArrayList<>();
                if (v != null) {
                    v.forEach(l::add);
                }
                events.add("headers prev=" + l);
            }
        };
        ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(Rpc.UNARY, options);
        r.start(call, new Metadata());
        call.request(1);
        call.sendMessage(Rpc.request("a"));
        call.halfClose();
        return r.awaitClose() + " | streams " + server.streams.get();
    }

    static void assertSame(Map<Engine, String> seen) {
        UsageRig.assertOursAsGrpcJavas(seen);
    }

    static final ChannelRetryConfig FAST = Configs.channel(Configs.policy(3, 10, 100, 2, Status.Code.UNAVAILABLE,
            Status.Code.CANCELLED, Status.Code.INTERNAL, Status.Code.RESOURCE_EXHAUSTED, Status.Code.UNKNOWN));

    // ------------------------------------------------------------------ RST_STREAM codes

    /** The first stream reset by the server with each HTTP/2 code, the next answered OK: both engines alike. */
    @ParameterizedTest
    @EnumSource(value = Http2Error.class, names = {"NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
        "CANCEL", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED", "REFUSED_STREAM", "STREAM_CLOSED"})
    void firstStreamResetWithEachCode(Http2Error code) throws Exception {
        Map<Engine, String> seen = both(FAST, firstThenOk(r -> r.rst(code)), c -> unary(c, CallOptions.DEFAULT));
        assertSame(seen);
    }

    /** Headers sent, then the stream reset: committed in both engines. */
    @ParameterizedTest
    @EnumSource(value = Http2Error.class, names = {"NO_ERROR", "CANCEL", "INTERNAL_ERROR", "REFUSED_STREAM"})
    void resetAfterHeaders(Http2Error code) throws Exception {
        Map<Engine, String> seen = both(FAST, firstThenOk(r -> {
            r.headers(new DefaultHttp2Headers());
            r.rst(code);
        }), c -> unary(c, CallOptions.DEFAULT));
        assertSame(seen);
    }

    // ------------------------------------------------------------------ hostile pushback values

    /**
     * The first attempt answers trailers-only UNAVAILABLE with one hostile pushback value, the next OK. (Several values
     * are a documented difference: not here.)
     */
    @ParameterizedTest
    @ValueSource(strings = {" 5", "5 ", "+5", "-0", "0x5", "", "5.0", "1e1", "-1", "2147483648", "0005", "-2147483649",
        "99999999999999999999", "5,5"})
    void hostilePushbackTrailersOnly(String value) throws Exception {
        Map<Engine, String> seen = both(FAST,
                firstThenOk(r -> r.trailersOnly(HostileHttp2Server.status(14, "grpc-retry-pushback-ms", value))),
                c -> unary(c, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS)));
        assertSame(seen);
    }

    /** The same failure, headers first then trailers: the headers commit in both engines, whatever the pushback. */
    @ParameterizedTest
    @ValueSource(strings = {"5", "-1", "junk"})
    void pushbackAfterHeadersIsCommitted(String value) throws Exception {
        Map<Engine, String> seen = both(FAST, firstThenOk(r -> {
            r.headers(new DefaultHttp2Headers());
            r.trailers(HostileHttp2Server.status(14, "grpc-retry-pushback-ms", value));
        }), c -> unary(c, CallOptions.DEFAULT));
        assertSame(seen);
    }

    // ------------------------------------------------------------------ metadata the server should not send

    /** The server sends grpc-previous-rpc-attempts back (junk, twice) in the headers of every attempt. */
    @ParameterizedTest
    @ValueSource(strings = {"7", "junk", ""})
    void previousAttemptsSentBackByTheServer(String value) throws Exception {
        Map<Engine, String> seen = both(FAST, (n, req, r) -> {
            if (n == 1) {
                r.trailersOnly(HostileHttp2Server.status(14, "grpc-previous-rpc-attempts", value));
            } else {
                r.headers(new DefaultHttp2Headers().add("grpc-previous-rpc-attempts", value)
                        .add("grpc-previous-rpc-attempts", value));
                r.message("ok");
                r.trailers(HostileHttp2Server.status(0, "grpc-previous-rpc-attempts", value));
            }
        }, c -> unary(c, CallOptions.DEFAULT) + " | sent " + server.requests.stream()
                .map(h -> String.valueOf(h.getAll("grpc-previous-rpc-attempts"))).toList());
        assertSame(seen);
    }

    /** grpc-status that is not a number, out of range, or missing, in a trailers-only answer. */
    @ParameterizedTest
    @ValueSource(strings = {"abc", "14 ", " 14", "17", "-1", "99999999999", "missing", "14,14"})
    void malformedGrpcStatus(String value) throws Exception {
        Map<Engine, String> seen = both(FAST, firstThenOk(r -> {
            r.trailersOnly(value.equals("missing") ? new DefaultHttp2Headers()
                    : new DefaultHttp2Headers().set("grpc-status", value));
        }), c -> unary(c, CallOptions.DEFAULT));
        assertSame(seen);
    }

    /** Trailers-only with an HTTP status that is not 200 (a proxy answering): grpc-java maps it to a gRPC code. */
    @ParameterizedTest
    @ValueSource(strings = {"503", "429", "502", "500", "404"})
    void httpStatusFromAProxy(String httpStatus) throws Exception {
        Map<Engine, String> seen = both(FAST, firstThenOk(r -> {
            r.ctx.writeAndFlush(new io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2HeadersFrame(
                    new DefaultHttp2Headers().status(httpStatus).set("content-type", "text/plain"), true)
                    .stream(r.stream));
        }), c -> unary(c, CallOptions.DEFAULT));
        assertSame(seen);
    }

    // ------------------------------------------------------------------ batch 2: ScriptedServer over Netty

    @org.junit.jupiter.api.extension.RegisterExtension
    static final SideBySideServers SERVERS = new SideBySideServers("hostile-peer");

    static String sendOne(Engines.Client c, ScriptedServer server, CallOptions options,
            io.grpc.MethodDescriptor<SimpleRequest, SimpleResponse> method) throws Exception {
        return UsageRig.sendOne(c.channel().newCall(method, options), new UsageRig.Recorder(), "a", server);
    }

    /** Five hedges that all answer OK at about the same moment: one wins, the application hears one answer. */
    @Test
    void fiveHedgesAnsweringTogether() throws Exception {
        ChannelRetryConfig hedged = Configs.channel(Configs.hedged(Configs.hedging(5, 20, Status.Code.UNAVAILABLE)));
        Map<Engine, String> seen = UsageRig.both(SERVERS, Engines.Transport.NETTY, hedged,
                a -> ScriptedServer.Action.ok().delay(Math.max(1, 600 - 20L * (a.index - 1))),
                (c, server) -> sendOne(c, server, CallOptions.DEFAULT, Rpc.SERVER_STREAMING));
        assertSame(seen);
    }

    /** The first attempt answers headers then a fatal status while two hedges run: the headers commit it. */
    @Test
    void headersThenFatalStatusOnTheFirstOfThreeHedges() throws Exception {
        ChannelRetryConfig hedged = Configs.channel(Configs.hedged(Configs.hedging(3, 40, Status.Code.UNAVAILABLE)));
        Map<Engine, String> seen = UsageRig.both(SERVERS, Engines.Transport.NETTY, hedged,
                a -> a.index == 1 ? ScriptedServer.Action.fail(Status.Code.INTERNAL)
                        .headersFirst().delay(300) : ScriptedServer.Action.ok().delay(3000),
                (c, server) -> sendOne(c, server, CallOptions.DEFAULT, Rpc.UNARY));
        assertSame(seen);
    }

    /** A Context deadline shorter than the call's, the server silent: both end DEADLINE_EXCEEDED. */
    @Test
    void contextDeadlineShorterThanTheCalls() throws Exception {
        Map<Engine, String> seen = UsageRig.both(SERVERS, Engines.Transport.NETTY, Configs.channel(Configs.fast(3)),
                a -> ScriptedServer.Action.ok().delay(5000), (c, server) -> {
                    io.grpc.Context.CancellableContext ctx = io.grpc.Context.current()
                            .withDeadlineAfter(200, TimeUnit.MILLISECONDS, java.util.concurrent.Executors
                                    .newSingleThreadScheduledExecutor());
                    try {
                        return ctx.call(() -> sendOne(c, server,
                                CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), Rpc.UNARY))
                                .replaceAll("[0-9.]+(s|ns|ms)", "N");
                    } finally {
                        ctx.cancel(null);
                    }
                });
        assertThat(seen.get(Engine.NATIVE)).startsWith("close DEADLINE_EXCEEDED");
        assertThat(seen.get(Engine.INTERCEPTOR)).startsWith("close DEADLINE_EXCEEDED");
    }

    /**
     * One message alone larger than the per-RPC limit, the first attempt failing retryably once the server has it (both
     * engines count the bytes when the message is framed, before it leaves: a server failing before it read the
     * message would race that count): no retry in either.
     */
    @Test
    void aMessageAloneAboveThePerRpcLimit() throws Exception {
        ChannelRetryConfig small = Configs.channel(Configs.service(Configs.fast(3), null), 1024, 1 << 20, null);
        Map<Engine, String> seen = UsageRig.both(SERVERS, Engines.Transport.NETTY, small,
                a -> a.index == 1 ? ScriptedServer.Action.failOnHalfClose(Status.Code.UNAVAILABLE)
                        : ScriptedServer.Action.ok(), (c, server) -> {
                    Rpc.Outcome o = Rpc.start(c.channel(), Rpc.CLIENT_STREAMING, CallOptions.DEFAULT).sendBytes(4096)
                            .halfClose().await();
                    return o.code() + " " + o.responses().size() + " | arrivals " + server.arrivalCount();
                });
        assertSame(seen);
    }

    // ------------------------------------------------------------------ a server's status text read as the channel's

    /**
     * A server, or a service that passes on the status of its own call below while its channel shuts down, answers
     * UNAVAILABLE with the text of grpc-java's channel shut-down ("Channel shutdown invoked" or "Channel shutdownNow
     * invoked"); the client's own channel is fine. Both engines retry it as any UNAVAILABLE: the engine, on a channel
     * built with builder.intercept(engine) (it knows no ManagedChannel), tells the server's status from its channel's
     * own close by the trailers the attempt's stream received.
     */
    @ParameterizedTest
    @ValueSource(strings = {"Channel shutdown invoked", "Channel shutdownNow invoked"})
    void aServersUnavailableWithTheChannelShutdownTextIsRetriedAsAnyUnavailable(String text) throws Exception {
        Map<Engine, String> seen = both(FAST,
                firstThenOk(r -> r.trailersOnly(HostileHttp2Server.status(14, "grpc-message", text.replace(" ", "%20")))),
                c -> unary(c, CallOptions.DEFAULT));
        assertThat(seen.get(Engine.NATIVE)).as("grpc-java retries the server's UNAVAILABLE")
                .isEqualTo("headers prev=[1]; message ok; close OK \"null\" | streams 2");
        assertSame(seen);
    }

    /** The same under hedging: the server's answer is a non-fatal failure, and the next hedge goes at once (A6). */
    @Test
    void aHedgesUnavailableWithTheChannelShutdownTextDoesNotStopHedging() throws Exception {
        ChannelRetryConfig hedged = Configs.channel(Configs.hedged(Configs.hedging(3, 5000, Status.Code.UNAVAILABLE)));
        Map<Engine, String> seen = both(hedged, firstThenOk(r -> r.trailersOnly(SHUTDOWN_TEXT)),
                c -> unary(c, CallOptions.DEFAULT));
        assertThat(seen.get(Engine.INTERCEPTOR)).as("ours: a non-fatal failure sends the next hedge at once (A6)")
                .isEqualTo("headers prev=[1]; message ok; close OK \"null\" | streams 2");
    }

    // ------------------------------------------------------------------ bodies the client cannot read

    /** Headers, then a message the client cannot decompress (unknown encoding, or the flag without an encoding). */
    @ParameterizedTest
    @ValueSource(strings = {"bogus", "none-declared", "gzip-but-plain"})
    void aMessageTheClientCannotDecompress(String how) throws Exception {
        Map<Engine, String> seen = both(FAST, firstThenOk(r -> Http2HeadersBuilder.send(r, how)),
                c -> unary(c, CallOptions.DEFAULT));
        assertSame(seen);
    }

    static final class Http2HeadersBuilder {
        static void send(HostileHttp2Server.Reply r, String how) {
            io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Headers h = new DefaultHttp2Headers();
            if (how.equals("bogus")) {
                h.set("grpc-encoding", "bogus");
            } else if (how.equals("gzip-but-plain")) {
                h.set("grpc-encoding", "gzip");
            }
            r.headers(h);
            io.grpc.netty.shaded.io.netty.buffer.ByteBuf b = io.grpc.netty.shaded.io.netty.buffer.Unpooled.buffer();
            b.writeByte(1).writeInt(3).writeBytes(new byte[] {1, 2, 3});
            r.ctx.writeAndFlush(new io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2DataFrame(b, false)
                    .stream(r.stream));
        }
    }

    // ------------------------------------------------------------------ the channel's buffer pool after every kind of end

    /**
     * 48 client-streaming calls at once on one channel (3 x 8 KiB each), ending every way: OK, retried then OK, every
     * attempt failing, committed by headers then failing, cancelled by the application mid-stream, a short deadline,
     * and hedged. Once all are closed the pool holds nothing.
     */
    @Test
    void everyByteGoesBackToThePoolHoweverTheCallsEnd() throws Exception {
        ScriptedServer server = SERVERS.server(Engines.Transport.NETTY);
        server.reset();
        server.script(a -> switch (Integer.parseInt(a.header("x-plan"))) {
            case 0 -> ScriptedServer.Action.ok();
            case 1 -> a.previousAttempts == null
                    ? ScriptedServer.Action.failOnHalfClose(Status.Code.UNAVAILABLE)
                    : ScriptedServer.Action.ok();
            case 2 -> ScriptedServer.Action.failOnHalfClose(Status.Code.UNAVAILABLE);
            case 3 -> ScriptedServer.Action.failOnHalfClose(Status.Code.UNAVAILABLE)
                    .headersFirst();
            default -> ScriptedServer.Action.ok().delay(2000);
        });
        ChannelRetryConfig config = Configs.channel(Configs.service(Configs.fast(3), null), 64 << 10, 256 << 10, null);
        Metadata.Key<String> plan = Metadata.Key.of("x-plan", Metadata.ASCII_STRING_MARSHALLER);
        try (Engines.Client c = Engines.interceptorClient(server, Engines.Transport.NETTY, config, SERVERS.scheduler())) {
            List<Rpc.Handle> handles = new java.util.ArrayList<>();
            for (int i = 0; i < 48; i++) {
                int p = i % 6;
                Metadata h = new Metadata();
                h.put(plan, String.valueOf(Math.min(p, 4)));
                CallOptions o = p == 5 ? CallOptions.DEFAULT.withDeadlineAfter(150, TimeUnit.MILLISECONDS)
                        : CallOptions.DEFAULT;
                Rpc.Handle handle = Rpc.start(c.channel(), Rpc.CLIENT_STREAMING, o, h).sendBytes(8192).sendBytes(8192);
                if (p == 4) {
                    handle.call.cancel("the application gives up", null);
                } else {
                    handle.sendBytes(8192).halfClose();
                }
                handles.add(handle);
            }
            StringBuilder codes = new StringBuilder();
            for (Rpc.Handle handle : handles) {
                codes.append(handle.await().code()).append(' ');
            }
            RetryEngineTest.waitFor(() -> c.events().callsEnded.get() == 48);
            assertThat(c.interceptor().bufferPool.used()).as("bytes held after every call ended: %s", codes).isZero();
        }
    }

    // ------------------------------------------------------------------ connection-level ends

    /** The first stream's connection ends: GOAWAY with a code then close, or a bare close; the retry on a new one. */
    @ParameterizedTest
    @ValueSource(strings = {"NO_ERROR", "CANCEL", "INTERNAL_ERROR", "ENHANCE_YOUR_CALM", "close", "headers-then-close"})
    void theFirstStreamsConnectionEnds(String how) throws Exception {
        Map<Engine, String> seen = both(FAST, (n, req, r) -> {
            if (n == 1) {
                if (how.equals("close")) {
                    r.closeConnection();
                } else if (how.equals("headers-then-close")) {
                    r.headers(new DefaultHttp2Headers());
                    r.closeConnection();
                } else {
                    r.goAway(Http2Error.valueOf(how), 0);
                    r.closeConnection();
                }
            } else {
                r.ok("ok");
            }
        }, c -> unary(c, CallOptions.DEFAULT).replaceAll("\\(.*\\)", ""));
        assertSame(seen);
    }

    /** Told of its ManagedChannel (watchShutdown), which is not shut down, the engine retries the same answer too. */
    @Test
    void toldOfItsChannelTheEngineRetriesTheServersShutdownText() throws Exception {
        server.script(firstThenOk(r -> r.trailersOnly(SHUTDOWN_TEXT)));
        try (Client c = client(Engine.INTERCEPTOR, server.target(), FAST)) {
            c.interceptor().watchShutdown(c.channel());
            assertThat(unary(c, CallOptions.DEFAULT)).isEqualTo("headers prev=[1]; message ok; close OK \"null\" | streams 2");
        }
    }
}
