package io.github.grpcretry.attempt;

import io.github.grpcretry.attempt.DifferentialScript.App;
import io.github.grpcretry.attempt.DifferentialScript.Fault;
import io.github.grpcretry.attempt.DifferentialScript.Twist;
import io.github.grpcretry.attempt.DifferentialScript.TwistKind;
import io.github.grpcretry.attempt.Engines.Engine;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientStreamTracer;
import io.grpc.Context;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs one {@link DifferentialScript} on one engine, on a fresh server and a fresh channel (no throttle
 * state carried over), direct executors on both sides, and returns what the application and the
 * server observed.
 */
final class DifferentialRun {

    /** The exception the application's listener throws. */
    static final class ApplicationFault extends RuntimeException {
        ApplicationFault() {
            super("thrown by the application's listener", null, false, false);
        }
    }

    /** The exception the request marshaller throws (twist MARSHALLER_THROWS). */
    static final class MarshallerFault extends RuntimeException {
        MarshallerFault(String message) {
            super("the marshaller cannot take " + message, null, false, false);
        }
    }

    /** The exception the call below the engine throws (twists BELOW_THROWS_*). */
    static final class BelowFault extends RuntimeException {
        BelowFault(String what) {
            super("below the engine: " + what + " failed", null, false, false);
        }
    }

    /** A value of the call's {@link Context}, which every callback must see. */
    static final Context.Key<String> TENANT = Context.key("differential-tenant");

    /** Names the exceptions of the scripts: "listener", "marshaller", "below", other's class names; null for none. */
    static String label(Throwable t) {
        return t == null ? null : t instanceof ApplicationFault ? "listener" : t instanceof MarshallerFault
                ? "marshaller" : t instanceof BelowFault ? "below" : t.getClass().getSimpleName();
    }

    /**
     * What one engine did: the server's arrivals ({@code grpc-previous-rpc-attempts}, the request
     * messages read, how each ended), the request messages the application wrote (when the call
     * closed OK or never closed; otherwise null: a close races the application's writes), and what it saw:
     * response headers and the {@code grpc-previous-rpc-attempts} they carried ({@code -} for none),
     * responses, the final code ({@code NEVER} when the call did not close), the close's cause
     * ({@link #label}), what the application's own calls into the call threw ({@link #label}), the
     * callbacks that ran without the call's {@link Context} value, and any break of the call contract.
     */
    record Observation(List<String> arrivals, Integer written, boolean headers, List<String> headerAttempts,
            List<String> responses, String code, String cause, List<String> thrownToApplication,
            List<String> contextLost, List<String> contractProblems) {

        boolean neverClosed() {
            return NEVER.equals(code);
        }

        boolean causeIsApplicationFault() {
            return "listener".equals(cause);
        }

        Observation withProblem(String problem) {
            List<String> problems = new ArrayList<>(contractProblems);
            problems.add(problem);
            return new Observation(arrivals, written, headers, headerAttempts, responses, code, cause,
                    thrownToApplication, contextLost, problems);
        }

        @Override
        public String toString() {
            return code + (cause == null ? "" : "(cause: " + cause + ")") + " responses=" + responses
                    + (headers ? " headers" + headerAttempts : " (no headers)") + " written=" + written
                    + " arrivals=" + arrivals
                    + (thrownToApplication.isEmpty() ? "" : " thrown to the application: " + thrownToApplication)
                    + (contextLost.isEmpty() ? "" : " without the call's Context: " + contextLost)
                    + (contractProblems.isEmpty() ? "" : " contract: " + contractProblems);
        }
    }

    static final String NEVER = "NEVER";

    private DifferentialRun() {
    }

    /**
     * Runs {@code script} on {@code engine}; a call that has not closed once the server has seen no new
     * arrival and every arrival has ended for {@code quietMillis} counts as never closing.
     */
    static Observation run(DifferentialScript script, Engine engine, RetryScheduler scheduler, long quietMillis)
            throws Exception {
        Twist twist = script.twist();
        ChannelRetryConfig config = script.policy().channelConfig(twist.is(TwistKind.BUFFER_LIMIT) ? twist.limit()
                : ChannelRetryConfig.DEFAULT_PER_RPC_BUFFER_LIMIT);
        RetryingClientInterceptor interceptor = null;
        Below below = new Below(twist);
        CallOptions options = CallOptions.DEFAULT.withExecutor(DifferentialServer.direct());
        if (twist.is(TwistKind.COMPRESSION)) {
            options = options.withCompression("gzip");
        }
        InProcessChannelBuilder b;
        try (DifferentialServer server = new DifferentialServer(script,
                DifferentialServer.uniqueName(script.seed(), engine.name()))) {
            b = InProcessChannelBuilder.forName(server.name()).directExecutor();
            if (engine == Engine.NATIVE) {
                b.defaultServiceConfig(config.serviceConfig().toServiceConfigMap(true)).enableRetry()
                        .maxRetryAttempts(config.maxAttemptsCap()).maxHedgedAttempts(config.maxAttemptsCap())
                        .perRpcBufferLimit(config.perRpcBufferLimit()).retryBufferSize(config.retryBufferSize());
                if (twist.is(TwistKind.BELOW_THROWS_SEND)) {
                    options = below.throwingStream(options); // what is below grpc-java's retry: the attempt's stream
                } else if (twist.is(TwistKind.BELOW_THROWS_REQUEST) || twist.is(TwistKind.BELOW_THROWS_HALF_CLOSE)) {
                    b.intercept(below); // nothing below grpc-java's retry takes these: above it, as an interceptor
                }
            } else {
                RetryThrottle throttle = config.serviceConfig().retryThrottling() == null ? null
                        : new RetryThrottle(config.serviceConfig().retryThrottling());
                interceptor = RetryingClientInterceptor.builder(config).throttle(throttle).scheduler(scheduler).build();
                // grpc-java's retry stays on below the engine, as on a Netty channel: transparent retries only
                b.defaultServiceConfig(config.serviceConfig().toServiceConfigMap(false)).enableRetry()
                        .intercept(below) // the interceptor added last runs first: the engine, then this one
                        .intercept(interceptor);
            }
            ManagedChannel channel = b.build();
            if (interceptor != null && (script.seed() & 1) == 0) {
                interceptor.watchShutdown(channel); // both wirings: told of its channel, or not
            }
            server.shutdownBy(twist.is(TwistKind.SHUTDOWN) ? channel::shutdown : channel::shutdownNow);
            try {
                Observation o = drive(script, channel, options, server, quietMillis);
                if (interceptor != null && EngineTestAccess.bufferPool(interceptor).used() != 0) {
                    o = o.withProblem(EngineTestAccess.bufferPool(interceptor).used() + " request bytes still held after the call");
                }
                for (String p : below.compressionProblems) {
                    o = o.withProblem(p);
                }
                return o;
            } finally {
                channel.shutdownNow();
                channel.awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    private static MethodDescriptor<SimpleRequest, SimpleResponse> method(DifferentialScript script) {
        MethodDescriptor<SimpleRequest, SimpleResponse> m = switch (script.app().method()) {
            case UNARY -> Rpc.UNARY;
            case CLIENT_STREAMING -> Rpc.CLIENT_STREAMING;
            case SERVER_STREAMING -> Rpc.SERVER_STREAMING;
        };
        if (!script.twist().is(TwistKind.MARSHALLER_THROWS)) {
            return m;
        }
        String poisoned = "q" + script.twist().message();
        MethodDescriptor.Marshaller<SimpleRequest> plain = m.getRequestMarshaller();
        return m.toBuilder().setRequestMarshaller(new MethodDescriptor.Marshaller<SimpleRequest>() {
            @Override
            public InputStream stream(SimpleRequest value) {
                if (value.getRequestMessage().equals(poisoned)) {
                    throw new MarshallerFault(poisoned);
                }
                return plain.stream(value);
            }

            @Override
            public SimpleRequest parse(InputStream stream) {
                return plain.parse(stream);
            }
        }).build();
    }

    private static Observation drive(DifferentialScript script, ManagedChannel channel, CallOptions options,
            DifferentialServer server, long quietMillis) throws InterruptedException {
        App app = script.app();
        Context context = Context.current().withValue(TENANT, "tenant-" + script.seed());
        Context previous = context.attach(); // the call's context is the one current at newCall
        ClientCall<SimpleRequest, SimpleResponse> call;
        Application application;
        ContractListener<SimpleResponse> listener;
        try {
            call = channel.newCall(method(script), options);
            application = new Application(script, call);
            listener = new ContractListener<>(application);
            call.start(listener, new Metadata());
            application.request(app.initialDemand());
            application.write();
        } finally {
            context.detach(previous);
        }

        awaitCloseOrQuiet(listener, server, quietMillis);
        // a call that did not close has had its quiet time at the server already: nothing more will end there
        long settleBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(listener.isClosed() ? 2 : 0);
        while (!server.settled() && System.nanoTime() < settleBy) {
            Thread.sleep(1); // an attempt cancelled on another thread reaches the server a moment later
        }
        List<String> arrivals = new ArrayList<>();
        for (DifferentialServer.Arrival a : server.arrivals()) {
            arrivals.add(a.toString());
        }
        List<String> responses = new ArrayList<>();
        for (SimpleResponse r : listener.messages()) {
            responses.add(r.getResponseMessage());
        }
        Status status = listener.status();
        boolean closed = listener.isClosed();
        List<String> problems = new ArrayList<>(listener.violations());
        if (listener.closeCount() > 1) {
            problems.add("closed " + listener.closeCount() + " times");
        }
        // the writes' progress is compared where the outcome does not race it: the call ended OK, or stalled
        Integer written = !closed || status.isOk() ? application.written() : null;
        return new Observation(arrivals, written, listener.headersCount() > 0, List.copyOf(application.headerAttempts),
                responses, closed ? status.getCode().name() : NEVER, closed ? label(status.getCause()) : null,
                List.copyOf(application.thrown), List.copyOf(application.contextLost), problems);
    }

    /**
     * The call below the engine (over the interceptor engine, below it; over grpc-java's, above its retry for
     * {@code request} and {@code halfClose}, its attempts' streams for {@code sendMessage}): throws as the
     * script's twist says, and checks that every message reaches it with the compression the application set
     * for it.
     */
    private static final class Below implements ClientInterceptor {
        private final Twist twist;
        final List<String> compressionProblems = new CopyOnWriteArrayList<>();

        Below(Twist twist) {
            this.twist = twist;
        }

        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                CallOptions callOptions, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
                private int requests;
                private Boolean compression;

                @Override
                public void setMessageCompression(boolean enabled) {
                    compression = enabled;
                    super.setMessageCompression(enabled);
                }

                @Override
                public void sendMessage(ReqT message) {
                    String text = ((SimpleRequest) message).getRequestMessage();
                    if (twist.is(TwistKind.BELOW_THROWS_SEND) && text.equals("q" + twist.message())) {
                        throw new BelowFault("sendMessage");
                    }
                    if (twist.is(TwistKind.COMPRESSION)) {
                        boolean expected = compressed(twist, Integer.parseInt(text.substring(1)));
                        if (compression == null || compression != expected) {
                            compressionProblems.add(text + " sent with compression " + compression + ", the application"
                                    + " set " + expected);
                        }
                    }
                    super.sendMessage(message);
                }

                @Override
                public void request(int numMessages) {
                    if (twist.is(TwistKind.BELOW_THROWS_REQUEST) && ++requests == 2) {
                        throw new BelowFault("request");
                    }
                    super.request(numMessages);
                }

                @Override
                public void halfClose() {
                    if (twist.is(TwistKind.BELOW_THROWS_HALF_CLOSE)) {
                        throw new BelowFault("halfClose");
                    }
                    super.halfClose();
                }
            };
        }

        /** grpc-java's: its attempt's stream throws as it writes message {@code twist.message()}. */
        CallOptions throwingStream(CallOptions options) {
            return options.withStreamTracerFactory(new ClientStreamTracer.Factory() {
                @Override
                public ClientStreamTracer newClientStreamTracer(ClientStreamTracer.StreamInfo info, Metadata headers) {
                    return new ClientStreamTracer() {
                        @Override
                        public void outboundMessage(int seqNo) {
                            if (seqNo == twist.message()) {
                                throw new BelowFault("sendMessage");
                            }
                        }
                    };
                }
            });
        }
    }

    /** Whether the application compresses message {@code index}. */
    static boolean compressed(Twist twist, int index) {
        return (twist.compressed() >> index & 1) == 1;
    }

    /**
     * Waits for the close; gives up when for {@code quietMillis} nothing has changed at the server (no
     * arrival, no message read, no arrival ended: the backoffs and pushbacks of the scripts are far
     * shorter), or after ten times that.
     */
    private static void awaitCloseOrQuiet(ContractListener<SimpleResponse> listener, DifferentialServer server,
            long quietMillis) throws InterruptedException {
        long quietSince = System.nanoTime();
        long giveUp = quietSince + TimeUnit.MILLISECONDS.toNanos(quietMillis * 10);
        String seen = "";
        while (!listener.tryAwaitClose(2, TimeUnit.MILLISECONDS) && System.nanoTime() < giveUp) {
            String now = server.arrivals().toString();
            if (!now.equals(seen)) {
                seen = now;
                quietSince = System.nanoTime();
            } else if (System.nanoTime() - quietSince > TimeUnit.MILLISECONDS.toNanos(quietMillis)) {
                return;
            }
        }
    }

    /**
     * The application: writes its request messages (all at once, or while the call is ready), asks
     * for responses as scripted, and cancels or throws from a callback. Writes and the cancel run in
     * one drain loop (a call takes no write after its cancel): what is asked for while another thread
     * (or this one, re-entering from {@code onReady}) runs the loop is taken up by that thread.
     */
    private static final class Application extends ClientCall.Listener<SimpleResponse> {
        private final App app;
        private final Twist twist;
        private final String tenant;
        private final ClientCall<SimpleRequest, SimpleResponse> call;
        private final AtomicInteger wip = new AtomicInteger();
        private volatile int written;
        private volatile boolean halfClosed;
        private volatile boolean faulted;
        /** One of the application's calls into the call threw: it stops writing. */
        private volatile boolean broken;
        private boolean cancelSent; // in the drain loop
        private volatile boolean closed;
        private int received; // callbacks are serialised
        final List<String> headerAttempts = new CopyOnWriteArrayList<>();
        final List<String> thrown = new CopyOnWriteArrayList<>();
        final List<String> contextLost = new CopyOnWriteArrayList<>();

        Application(DifferentialScript script, ClientCall<SimpleRequest, SimpleResponse> call) {
            this.app = script.app();
            this.twist = script.twist();
            this.tenant = "tenant-" + script.seed();
            this.call = call;
        }

        int written() {
            return written;
        }

        /** Records a callback that runs without the call's {@link Context} value. */
        private void inContext(String callback) {
            if (!tenant.equals(TENANT.get())) {
                contextLost.add(callback);
            }
        }

        /** Runs one of the application's calls into the call, recording what it throws. */
        private boolean attempt(Runnable op) {
            try {
                op.run();
                return true;
            } catch (RuntimeException e) {
                thrown.add(label(e));
                broken = true;
                return false;
            }
        }

        void request(int n) {
            attempt(() -> call.request(n));
        }

        void write() {
            if (wip.getAndIncrement() != 0) {
                return;
            }
            do {
                if (faulted && app.fault() == Fault.CANCEL) {
                    if (!cancelSent) {
                        cancelSent = true;
                        call.cancel("cancelled by the application", null);
                    }
                    continue;
                }
                while (!closed && !faulted && !broken && written < app.requests()
                        && (!app.onReadyWriter() || call.isReady())) {
                    int index = written;
                    if (twist.is(TwistKind.COMPRESSION)) {
                        call.setMessageCompression(compressed(twist, index));
                    }
                    if (attempt(() -> call.sendMessage(Rpc.request("q" + index)))) {
                        written++;
                    }
                }
                if (!closed && !faulted && !broken && !halfClosed && written == app.requests()) {
                    halfClosed = true;
                    attempt(call::halfClose);
                }
            } while (wip.decrementAndGet() != 0);
        }

        private void fault() {
            faulted = true;
            if (app.fault() == Fault.CANCEL) {
                write();
            } else {
                throw new ApplicationFault();
            }
        }

        @Override
        public void onHeaders(Metadata headers) {
            inContext("onHeaders");
            String prev = headers.get(ScriptedServer.PREVIOUS_ATTEMPTS);
            headerAttempts.add(prev == null ? "-" : prev);
            if (app.fault() != Fault.NONE && !app.throwInOnReady() && app.faultAfter() == 0 && !faulted) {
                fault();
            }
        }

        @Override
        public void onMessage(SimpleResponse message) {
            inContext("onMessage");
            received++;
            if (app.fault() != Fault.NONE && !app.throwInOnReady() && app.faultAfter() == received && !faulted) {
                fault();
            } else if (!faulted) {
                request(app.demandPerMessage());
            }
        }

        @Override
        public void onReady() {
            inContext("onReady");
            if (app.throwInOnReady() && !faulted) {
                fault();
            }
            if (app.onReadyWriter()) {
                write();
            }
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            inContext("onClose");
            closed = true;
        }
    }
}
