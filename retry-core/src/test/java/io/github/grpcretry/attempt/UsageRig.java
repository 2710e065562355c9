package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.Engines.Engine;
import io.github.grpcretry.attempt.Engines.Transport;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The rig of the usage side-by-side tests: a scenario drives one call and writes down, as one line, what the
 * application saw; {@link #both} runs it on grpc-java's engine (the reference) and then on ours against the same
 * server and script, so a difference shows as the two lines.
 */
abstract class UsageRig {

    /** A scenario: drives one call on the client's channel and says what the application saw. */
    interface Scenario {
        String run(Engines.Client client, ScriptedServer server) throws Exception;
    }

    /** Runs {@code scenario} on grpc-java's engine, then on ours, against the same server and script. */
    static Map<Engine, String> both(SideBySideServers servers, Transport t, ChannelRetryConfig config,
            Function<Arrival, Action> script, Scenario scenario, ClientInterceptor... belowOurs) throws Exception {
        Map<Engine, String> seen = new EnumMap<>(Engine.class);
        for (Engine engine : List.of(Engine.NATIVE, Engine.INTERCEPTOR)) {
            ScriptedServer server = servers.server(t);
            server.reset();
            server.script(script);
            try (Engines.Client c = engine == Engine.NATIVE ? Engines.nativeClient(server, t, config)
                    : Engines.interceptorClient(server, t, config, servers.scheduler(), belowOurs)) {
                try {
                    seen.put(engine, scenario.run(c, server));
                } catch (AssertionError e) { // the scenario could not finish (a close never came): that is what it saw
                    seen.put(engine, "failed: " + e.getMessage().replace('\n', ' '));
                }
            }
        }
        return seen;
    }

    /** Runs {@code scenario} on our engine only (where grpc-java's reference cannot finish: said where used). */
    static String ours(SideBySideServers servers, Transport t, ChannelRetryConfig config,
            Function<Arrival, Action> script, Scenario scenario) throws Exception {
        ScriptedServer server = servers.server(t);
        server.reset();
        server.script(script);
        try (Engines.Client c = Engines.interceptorClient(server, t, config, servers.scheduler())) {
            return scenario.run(c, server);
        }
    }

    static void assertOursAsGrpcJavas(Map<Engine, String> seen) {
        assertThat(seen.get(Engine.NATIVE)).as("grpc-java's scenario finished (ours: %s)", seen.get(Engine.INTERCEPTOR))
                .doesNotStartWith("failed: ");
        assertThat(seen.get(Engine.INTERCEPTOR)).as("ours (grpc-java's: %s)", seen.get(Engine.NATIVE))
                .isEqualTo(seen.get(Engine.NATIVE));
    }

    static String describe(Status s) {
        Throwable cause = s.getCause();
        return s.getCode() + " \"" + s.getDescription() + "\""
                + (cause == null ? "" : " cause " + cause.getClass().getSimpleName() + ": " + cause.getMessage());
    }

    /** What a call of the application threw, or "returned". */
    static String thrown(Runnable r) {
        try {
            r.run();
            return "returned";
        } catch (RuntimeException e) {
            return e.getClass().getSimpleName() + ": " + e.getMessage();
        }
    }

    /**
     * The application's listener: writes down headers, messages and the close in order (not onReady, whose count
     * depends on the transport) and asks for one more message after each; {@link #hook} runs inside each callback.
     */
    static class Recorder extends ClientCall.Listener<SimpleResponse> {
        final List<String> events = Collections.synchronizedList(new ArrayList<>());
        final CountDownLatch closed = new CountDownLatch(1);
        final ContractListener<SimpleResponse> checked = new ContractListener<>(this);
        volatile ClientCall<SimpleRequest, SimpleResponse> call;
        volatile boolean requestAfterMessage = true;
        /** Runs inside the callback named (onHeaders, onMessage, onReady, onClose); may cancel or throw. */
        volatile java.util.function.Consumer<String> hook = name -> { };

        @Override
        public void onHeaders(Metadata headers) {
            events.add("headers");
            hook.accept("onHeaders");
        }

        @Override
        public void onMessage(SimpleResponse message) {
            events.add("message " + message.getResponseMessage());
            hook.accept("onMessage");
            if (requestAfterMessage) {
                call.request(1);
            }
        }

        @Override
        public void onReady() {
            hook.accept("onReady");
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            events.add("close " + describe(status));
            try {
                hook.accept("onClose");
            } finally {
                closed.countDown();
            }
        }

        /** Starts {@code call} with this listener (contract-checked). */
        Recorder start(ClientCall<SimpleRequest, SimpleResponse> c, Metadata headers) {
            call = c;
            c.start(checked, headers);
            return this;
        }

        String awaitClose() throws InterruptedException {
            assertThat(closed.await(10, TimeUnit.SECONDS)).as("closed in 10 s: %s", events).isTrue();
            checked.assertContract();
            return String.join("; ", events);
        }
    }


    /**
     * Starts {@code call} with {@code r}, asks for one message, sends {@code message} and half-closes; what the
     * application heard, and how many attempts reached {@code server}.
     */
    static String sendOne(ClientCall<SimpleRequest, SimpleResponse> call, Recorder r, String message,
            ScriptedServer server) throws InterruptedException {
        r.start(call, new Metadata());
        call.request(1);
        call.sendMessage(Rpc.request(message));
        call.halfClose();
        return r.awaitClose() + " | arrivals " + server.arrivalCount();
    }
}
