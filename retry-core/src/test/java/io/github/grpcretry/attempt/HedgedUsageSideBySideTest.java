package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.Engines.Engine;
import io.github.grpcretry.attempt.Engines.Transport;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link ClientCallUsageSideBySideTest}'s ways of driving a call, on the hedging engine ({@link HedgingCall}) with
 * grpc-java's hedging as the reference, plus what marshallers and interceptors below the engine do to a retry.
 * The hedging delay is long (5 s) and the server answers, so a call has one attempt in both engines and the
 * outcome does not depend on timing; where a hedge is needed the first attempt fails before any answer.
 */
class HedgedUsageSideBySideTest extends UsageRig {

    @RegisterExtension
    static final SideBySideServers SERVERS = new SideBySideServers("hedged-usage");

    private static final ChannelRetryConfig HEDGED = Configs.channel(
            Configs.hedged(Configs.hedging(3, 5_000, Status.Code.UNAVAILABLE)));

    private static final ChannelRetryConfig FAST = Configs.channel(Configs.fast(3));

    private static Map<Engine, String> both(Transport t, ChannelRetryConfig config, Function<Arrival, Action> script,
            Scenario scenario) throws Exception {
        return UsageRig.both(SERVERS, t, config, script, scenario);
    }

    /** A listener that throws from onHeaders or onMessage of a hedged call: CANCELLED with the exception as the cause. */
    @ParameterizedTest
    @CsvSource({"IN_PROCESS,onHeaders", "IN_PROCESS,onMessage", "NETTY,onHeaders", "NETTY,onMessage"})
    void aListenerThatThrowsEndsTheHedgedCallCancelledWithTheExceptionAsTheCause(Transport t, String callback)
            throws Exception {
        // the description is one of ClientCallUsageSideBySideTest's findings: code and cause compared here
        Map<Engine, String> seen = both(t, HEDGED, a -> Action.ok(), (c, server) -> ClientCallUsageSideBySideTest
                .closeOfAThrowingListener(c, server, callback).replaceFirst(" \"[^\"]*\"", "") + " | arrivals "
                + server.arrivalCount());
        assertThat(seen.get(Engine.NATIVE)).as("grpc-java's").isEqualTo("close CANCELLED cause IllegalStateException:"
                + " thrown by the application's " + callback + " | arrivals 1");
        assertOursAsGrpcJavas(seen);
    }

    /** The hedged call's response cannot be parsed: CANCELLED "Failed to read message." with the parser's exception. */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void aResponseThatCannotBeParsedEndsTheHedgedCallAsGrpcJavas(Transport t) throws Exception {
        Map<Engine, String> seen = both(t, HEDGED, a -> Action.ok(), ClientCallUsageSideBySideTest::unparsableResponse);
        assertThat(seen.get(Engine.NATIVE)).as("grpc-java's").isEqualTo("headers; close CANCELLED \"Failed to read"
                + " message.\" cause IllegalArgumentException: cannot parse boom | arrivals 1");
        assertOursAsGrpcJavas(seen);
    }

    /** Refused operations on a hedged call: a message after the half-close, a second half-close; the call goes on. */
    @Test
    void aMessageOrASecondHalfCloseAfterTheHalfCloseOfAHedgedCallIsRefused() throws Exception {
        // the server answers after 300 ms: the refusals come while the call is open and uncommitted (once it passes
        // through, or has ended, the engine does not refuse: ClientCallUsageSideBySideTest's findings)
        Map<Engine, String> seen = both(Transport.IN_PROCESS, HEDGED, a -> Action.ok().delay(300),
                ClientCallUsageSideBySideTest::afterHalfClose);
        assertThat(seen.get(Engine.NATIVE)).as("grpc-java's").isEqualTo("message: IllegalStateException: call was"
                + " half-closed | half-close: IllegalStateException: call already half-closed | ready false | headers;"
                + " message a; close OK \"null\" | arrivals 1");
        assertOursAsGrpcJavas(seen);
    }

    /** A hedged call cancelled before start: start is refused, nothing reaches the server. */
    @Test
    void aHedgedCallCancelledBeforeStartCannotStart() throws Exception {
        Map<Engine, String> seen = both(Transport.IN_PROCESS, HEDGED, a -> Action.ok(),
                ClientCallUsageSideBySideTest::cancelledBeforeStart);
        assertThat(seen.get(Engine.NATIVE)).as("grpc-java's")
                .isEqualTo("start: IllegalStateException: call was cancelled | heard [] | next OK | arrivals 1");
        assertOursAsGrpcJavas(seen);
    }

    /**
     * The first hedge's call credentials fail UNAVAILABLE (non-fatal): the next hedge goes (grpc-java after the
     * hedging delay, ours at once: docs/differences.md), is asked for credentials again and answered.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void callCredentialsThatFailTheFirstHedge(Transport t) throws Exception {
        ChannelRetryConfig quickHedges = Configs.channel(Configs.hedged(Configs.hedging(3, 1_000, Status.Code.UNAVAILABLE)));
        Map<Engine, String> seen = both(t, quickHedges, a -> Action.ok(),
                (c, server) -> ClientCallUsageSideBySideTest.credentialsFailingFirst(c, server, Status.Code.UNAVAILABLE));
        assertThat(seen.get(Engine.NATIVE)).as("grpc-java's").isEqualTo("OK \"null\" [a] | credentials asked 2 | arrivals 1");
        assertOursAsGrpcJavas(seen);
    }

    // ------------------------------------------------------------------ marshallers and interceptors below the engine

    /**
     * A request marshaller that fails on its second stream() only: the first attempt's message goes, the retry's
     * replay of it fails. grpc-java's retry replays on its timer thread where the exception escapes and the call is
     * never closed (docs/differences.md, "a message that fails as a retry replays it"): ours alone. The call ends
     * CANCELLED "Failed to stream message" with the marshaller's exception, and the retry's attempt is cancelled.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void aMarshallerThatFailsOnlyOnTheRetrysReplayEndsTheCall(Transport t) throws Exception {
        AtomicInteger streamed = new AtomicInteger();
        MethodDescriptor<SimpleRequest, SimpleResponse> secondFails = Rpc.UNARY.toBuilder(
                new MethodDescriptor.Marshaller<SimpleRequest>() {
                    @Override
                    public InputStream stream(SimpleRequest value) {
                        if (streamed.incrementAndGet() == 2) {
                            throw new IllegalArgumentException("second stream() fails");
                        }
                        return Rpc.UNARY.getRequestMarshaller().stream(value);
                    }

                    @Override
                    public SimpleRequest parse(InputStream stream) {
                        return Rpc.UNARY.getRequestMarshaller().parse(stream);
                    }
                }, Rpc.UNARY.getResponseMarshaller()).build();
        // the first arrival fails only after the half-close: the first attempt has marshalled the message by then
        String seen = UsageRig.ours(SERVERS, t, FAST,
                a -> a.index == 1 ? Action.failOnHalfClose(Status.Code.UNAVAILABLE) : Action.ok(),
                (c, server) -> {
                    String events = sendOne(c.channel().newCall(secondFails, CallOptions.DEFAULT), new Recorder(), "a",
                            server);
                    events = events.substring(0, events.indexOf(" | arrivals"));
                    RetryEngineTest.waitFor(() -> c.events().attemptsEnded.get() == 2); // nothing left open here
                    List<String> ends = new ArrayList<>();
                    for (Arrival a : server.arrivals()) {
                        RetryEngineTest.waitFor(() -> a.closedByServer || a.cancelled); // nor on the server
                        ends.add(a.closedByServer ? "closed by the server" : "cancelled");
                    }
                    return events + " | arrivals " + ends + " | buffer " + EngineTestAccess.bufferPool(c.interceptor()).used();
                });
        assertThat(seen).startsWith("close CANCELLED \"Failed to stream message\" cause IllegalArgumentException:"
                + " second stream() fails | arrivals [closed by the server").endsWith(" | buffer 0");
        assertThat(streamed).hasValue(2);
    }

    /** An interceptor below the engine that forgets super.start (a ForwardingClientCall bug). */
    private static final ClientInterceptor FORGETS_START = new ClientInterceptor() {
        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                CallOptions callOptions, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
                @Override
                public void start(Listener<RespT> listener, Metadata headers) {
                    // forgot super.start(listener, headers)
                }
            };
        }
    };

    /**
     * Below the engine, the attempt's call never starts ({@link #FORGETS_START}). grpc-java has nothing below its
     * retry to compare (above it, the application's own request would throw "Not started"). The engine must not
     * hang the call: it ends CANCELLED with the call below's refusal as the cause, nothing reaches the server.
     */
    @Test
    void anInterceptorBelowThatForgetsToStartEndsTheCall() throws Exception {
        try (Engines.Client c = forgotStart()) {
            assertThat(unaryCall(c)).isEqualTo("close CANCELLED \"Failed to request messages\" cause"
                    + " IllegalStateException: Not started | arrivals 0");
            assertThat(SERVERS.server(Transport.IN_PROCESS).arrivalCount()).isZero();
            RetryEngineTest.waitFor(() -> c.events().callsEnded.get() == 1);
            assertThat(EngineTestAccess.bufferPool(c.interceptor()).used()).isZero();
        }
    }

    /** As above: the attempt the engine reported started is reported ended too (its call below never closes). */
    @Test
    void anAttemptWhoseCallBelowNeverStartedIsReportedEnded() throws Exception {
        try (Engines.Client c = forgotStart()) {
            unaryCall(c);
            RetryEngineTest.waitFor(() -> c.events().callsEnded.get() == 1);
            RetryEngineTest.waitFor(() -> c.events().attemptsEnded.get() == 1);
        }
    }

    /**
     * As above, when the application cancels right after start: the engine's cancel of the attempt first asks for
     * the messages it may still hold, which the call below refuses ("Not started"), so it never closes: the attempt
     * is reported ended at its cancel.
     */
    @Test
    void anAttemptWhoseCallBelowNeverStartedIsReportedEndedAfterTheApplicationsCancel() throws Exception {
        try (Engines.Client c = forgotStart()) {
            ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(Rpc.UNARY, CallOptions.DEFAULT);
            Recorder r = new Recorder().start(call, new Metadata());
            call.cancel("gave up", null);
            assertThat(r.awaitClose()).startsWith("close CANCELLED \"gave up\"");
            RetryEngineTest.waitFor(() -> c.events().callsEnded.get() == 1);
            RetryEngineTest.waitFor(() -> c.events().attemptsEnded.get() == 1);
            assertThat(SERVERS.server(Transport.IN_PROCESS).arrivalCount()).isZero();
        }
    }

    private static String unaryCall(Engines.Client c) throws InterruptedException {
        return sendOne(c.channel().newCall(Rpc.UNARY, CallOptions.DEFAULT), new Recorder(), "a",
                SERVERS.server(Transport.IN_PROCESS));
    }

    private static Engines.Client forgotStart() {
        ScriptedServer server = SERVERS.server(Transport.IN_PROCESS);
        server.reset();
        server.script(a -> Action.ok());
        return Engines.interceptorClient(server, Transport.IN_PROCESS, FAST, SERVERS.scheduler(), FORGETS_START);
    }
}
