package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.Engines.Engine;
import io.github.grpcretry.attempt.Engines.Transport;
import io.github.grpcretry.attempt.LongStreamRig.SameRequestResumption;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every scenario of {@link ClientCallUsageSideBySideTest} again, with our engine's channels given a generous
 * {@code streams.idle-timeout} (it never fires) and a {@link StreamResumption} of the server-streaming method (no
 * stream breaks past its commit with a status the policy retries): neither may change what an application sees, so
 * grpc-java's own retry stays the reference. Then server- and bidi-streaming scenarios of their own (the other class's
 * are mostly unary and client-streaming, where neither applies): the response headers' retry metadata, a break
 * past the commit with a status the policy does not retry, a reader that asks from another thread, an
 * onReady-driven bidi writer, the call's Context in every callback.
 */
@ExtendWith(Engines.LongStreams.class)
class LongStreamUsageSideBySideTest extends ClientCallUsageSideBySideTest {

    private static final ChannelRetryConfig FAST = Configs.channel(Configs.fast(3));
    private static final Metadata.Key<String> PREVIOUS = Metadata.Key.of("grpc-previous-rpc-attempts",
            Metadata.ASCII_STRING_MARSHALLER);

    /** The mode this class runs in reaches the engine: its streaming calls are long streams, with a resumer. */
    @Test
    void ourServerAndBidiStreamsHereAreLongStreamsWithAResumer() throws Exception {
        ScriptedServer server = SERVERS.server(Transport.IN_PROCESS);
        server.reset();
        server.script(ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE));
        int started = SameRequestResumption.STARTED.get();
        int delivered = SameRequestResumption.DELIVERED.get();
        try (Engines.Client c = Engines.interceptorClient(server, Transport.IN_PROCESS, FAST, SERVERS.scheduler())) {
            assertThat(c.interceptor().idleTimeoutNanos).isEqualTo(Engines.GENEROUS_IDLE.toNanos());
            ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(Rpc.SERVER_STREAMING, CallOptions.DEFAULT);
            ClientCall<SimpleRequest, SimpleResponse> bidi = c.channel().newCall(Rpc.BIDI, CallOptions.DEFAULT);
            assertThat(((EngineCall<?, ?>) call).stream).isNotNull();
            assertThat(((EngineCall<?, ?>) bidi).stream).isNotNull();
            assertThat(sendOne(call, new Recorder(), "a", server))
                    .isEqualTo("headers; message r0; message r1; message r2; close OK \"null\" | arrivals 2");
        }
        assertThat(SameRequestResumption.STARTED.get() - started).as("a resumer, made at the request").isEqualTo(1);
        assertThat(SameRequestResumption.DELIVERED.get() - delivered).as("told of each response").isEqualTo(3);
    }

    /** A retried server stream: the application's headers carry grpc-previous-rpc-attempts as grpc-java's do. */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void theRetriedServerStreamsHeadersCarryGrpcPreviousRpcAttempts(Transport t) throws Exception {
        Map<Engine, String> seen = both(t, FAST, ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE), (c, server) -> {
            ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(Rpc.SERVER_STREAMING, CallOptions.DEFAULT);
            List<String> previous = Collections.synchronizedList(new ArrayList<>());
            Recorder r = new Recorder() {
                @Override
                public void onHeaders(Metadata headers) {
                    previous.add(String.valueOf(headers.get(PREVIOUS)));
                    super.onHeaders(headers);
                }
            };
            return sendOne(call, r, "a", server) + " | previous attempts " + previous + " | server saw "
                    + server.arrivals().stream().map(a -> String.valueOf(a.previousAttempts)).toList();
        });
        assertThat(seen.get(Engine.NATIVE)).as("grpc-java's").isEqualTo("headers; message r0; message r1; message r2;"
                + " close OK \"null\" | arrivals 3 | previous attempts [2] | server saw [null, 1, 2]");
        assertOursAsGrpcJavas(seen);
    }

    /**
     * A server stream that breaks past its commit with a status its policy does not retry (INTERNAL after two
     * responses, on the retry): the call ends with it, as grpc-java's, and the resumer is not asked.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void aBreakPastTheCommitWithAStatusThePolicyDoesNotRetryEndsTheCallAsGrpcJavas(Transport t) throws Exception {
        int asked = SameRequestResumption.ASKED.get();
        Map<Engine, String> seen = both(t, FAST, a -> a.index == 1 ? Action.fail(Status.Code.UNAVAILABLE)
                : Action.ok().responses(2).thenFail(Status.Code.INTERNAL), (c, server) -> sendOne(
                        c.channel().newCall(Rpc.SERVER_STREAMING, CallOptions.DEFAULT), new Recorder(), "a", server));
        assertThat(seen.get(Engine.NATIVE)).as("grpc-java's").isEqualTo("headers; message r0; message r1; close"
                + " INTERNAL \"null\" | arrivals 2");
        assertOursAsGrpcJavas(seen);
        assertThat(SameRequestResumption.ASKED.get()).as("no resume request asked for").isEqualTo(asked);
    }

    /**
     * A slow reader of a retried server stream that asks for one response at a time from its own thread, each only
     * once it was served the one before (demand of none between): every response once, in order, then the close.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void aReaderThatAsksFromItsOwnThreadOneAtATime(Transport t) throws Exception {
        Map<Engine, String> seen = both(t, FAST, a -> a.index == 1 ? Action.fail(Status.Code.UNAVAILABLE)
                : Action.ok().responses(5), (c, server) -> {
            ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(Rpc.SERVER_STREAMING, CallOptions.DEFAULT);
            Recorder r = new Recorder();
            r.requestAfterMessage = false;
            r.start(call, new Metadata());
            call.sendMessage(Rpc.request("a"));
            call.halfClose();
            for (int served = 0; served < 5; served++) {
                int before = served;
                call.request(1);
                RetryEngineTest.waitFor(() -> r.checked.messages().size() == before + 1);
            }
            call.request(1); // the close follows the last response at once; this asks for nothing more
            return r.awaitClose() + " | arrivals " + server.arrivalCount();
        });
        assertThat(seen.get(Engine.NATIVE)).as("grpc-java's").isEqualTo("headers; message r0; message r1; message r2;"
                + " message r3; message r4; close OK \"null\" | arrivals 2");
        assertOursAsGrpcJavas(seen);
    }

    /**
     * A bidi call written from onReady only, while isReady() (as grpc-java's stubs write), whose first attempt fails
     * on arrival: the retry replays what was written, every echo comes back, once, in order.
     */
    @Test
    void anOnReadyDrivenBidiWriterWhoseFirstAttemptFails() throws Exception {
        int total = 20;
        Map<Engine, String> seen = both(Transport.NETTY, FAST, ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE),
                (c, server) -> {
            ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(Rpc.BIDI, CallOptions.DEFAULT);
            List<String> written = Collections.synchronizedList(new ArrayList<>());
            Recorder r = new Recorder() {
                private boolean halfClosed;

                @Override
                public synchronized void onReady() {
                    while (written.size() < total && call.isReady()) {
                        String m = "m" + written.size();
                        call.sendMessage(Rpc.request(m));
                        written.add(m);
                    }
                    if (written.size() == total && !halfClosed) {
                        halfClosed = true;
                        call.halfClose();
                    }
                }
            };
            r.requestAfterMessage = false;
            r.start(call, new Metadata());
            call.request(Integer.MAX_VALUE);
            String events = r.awaitClose();
            return events.split("; ").length - 2 + " echoes, in order " + events.equals(expectedEchoes(total))
                    + " | " + events.substring(events.indexOf("close ")) + " | arrivals " + server.arrivalCount();
        });
        assertThat(seen.get(Engine.NATIVE)).as("grpc-java's").isEqualTo(total + " echoes, in order true | close OK"
                + " \"null\" | arrivals 2");
        assertOursAsGrpcJavas(seen);
    }

    private static String expectedEchoes(int total) {
        StringBuilder b = new StringBuilder("headers; ");
        for (int i = 0; i < total; i++) {
            b.append("message m").append(i).append("; ");
        }
        return b.append("close OK \"null\"").toString();
    }

    private static final Context.Key<String> TENANT = Context.key("tenant");

    /** The call's Context (a tenant) in every callback of a retried server stream, as grpc-java's. */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void theCallsContextInEveryCallbackOfARetriedServerStream(Transport t) throws Exception {
        Map<Engine, String> seen = both(t, FAST, ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE), (c, server) -> {
            List<String> tenants = Collections.synchronizedList(new ArrayList<>());
            Recorder r = new Recorder();
            r.hook = name -> tenants.add(name + " " + TENANT.get());
            String events = Context.current().withValue(TENANT, "acme").call(() -> sendOne(
                    c.channel().newCall(Rpc.SERVER_STREAMING, CallOptions.DEFAULT), r, "a", server));
            return events + " | " + tenants;
        });
        assertThat(seen.get(Engine.NATIVE)).as("grpc-java's").endsWith("[onHeaders acme, onMessage acme, onMessage acme,"
                + " onMessage acme, onClose acme]");
        assertOursAsGrpcJavas(seen);
    }

    /**
     * An interceptor below the engine throws from request() once the server stream has committed (the application
     * asks for the next response from onMessage; whether the engine has switched to passing through by then is the
     * scheduling's business, and either way the outcome is the same): as for any call of the engine's (no
     * grpc-java control: its ClientCallImpl lets a stream's request() exception escape), the call ends CANCELLED
     * "Failed to request messages" with the exception as the cause, the attempt ends, nothing is resumed or
     * retried, and nothing reaches the application's thread.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void anInterceptorBelowThatThrowsFromRequestWhilePassingThrough(Transport t) throws Exception {
        ScriptedServer server = SERVERS.server(t);
        server.reset();
        server.script(a -> Action.ok().responses(3)); // its close waits behind the responses not asked for yet
        java.util.concurrent.atomic.AtomicBoolean armed = new java.util.concurrent.atomic.AtomicBoolean();
        io.grpc.ClientInterceptor below = new io.grpc.ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(io.grpc.MethodDescriptor<ReqT, RespT> method,
                    CallOptions options, io.grpc.Channel next) {
                return new io.grpc.ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void request(int n) {
                        if (armed.get()) {
                            throw new IllegalStateException("below the engine: request failed");
                        }
                        super.request(n);
                    }
                };
            }
        };
        int asked = SameRequestResumption.ASKED.get();
        try (Engines.Client c = Engines.interceptorClient(server, t, FAST, SERVERS.scheduler(), below)) {
            ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(Rpc.SERVER_STREAMING, CallOptions.DEFAULT);
            Recorder r = new Recorder();
            r.requestAfterMessage = false;
            List<String> thrown = Collections.synchronizedList(new ArrayList<>());
            r.hook = name -> {
                if (name.equals("onMessage")) { // committed; passing through already, or about to once the log is sent
                    armed.set(true);
                    thrown.add(thrown(() -> call.request(1)));
                }
            };
            r.start(call, new Metadata());
            call.request(1);
            call.sendMessage(Rpc.request("a"));
            call.halfClose();
            String events = r.awaitClose();
            assertThat(events + " | " + thrown).isEqualTo("headers; message r0; close CANCELLED \"Failed to request"
                    + " messages\" cause IllegalStateException: below the engine: request failed | [returned]");
            RetryEngineTest.waitFor(() -> c.events().attemptsEnded.get() == 1);
            assertThat(server.arrivalCount()).isEqualTo(1);
        }
        assertThat(SameRequestResumption.ASKED.get()).as("not resumed").isEqualTo(asked);
    }
}
