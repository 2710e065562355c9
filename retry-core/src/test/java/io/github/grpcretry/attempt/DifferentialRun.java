package io.github.grpcretry.attempt;

import io.github.grpcretry.attempt.DifferentialScript.App;
import io.github.grpcretry.attempt.DifferentialScript.Fault;
import io.github.grpcretry.attempt.Engines.Engine;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.util.ArrayList;
import java.util.List;
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

    /**
     * What one engine did: the server's arrivals ({@code grpc-previous-rpc-attempts}, the request
     * messages read, how each ended), the request messages the application wrote (when the call
     * closed OK or never closed; otherwise null: a close races the application's writes), and what it saw:
     * response headers, responses, the final code ({@code NEVER} when the call did not close), whether
     * that close carried the listener's exception, and any break of the call contract.
     */
    record Observation(List<String> arrivals, Integer written, boolean headers, List<String> responses, String code,
            boolean causeIsApplicationFault, List<String> contractProblems) {

        boolean neverClosed() {
            return NEVER.equals(code);
        }

        @Override
        public String toString() {
            return code + (causeIsApplicationFault ? "(cause: listener's exception)" : "") + " responses="
                    + responses + (headers ? "" : " (no headers)") + " written=" + written + " arrivals=" + arrivals
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
        ChannelRetryConfig config = script.policy().channelConfig();
        RetryingClientInterceptor interceptor = null;
        InProcessChannelBuilder b;
        try (DifferentialServer server = new DifferentialServer(script,
                DifferentialServer.uniqueName(script.seed(), engine.name()))) {
            b = InProcessChannelBuilder.forName(server.name()).directExecutor();
            if (engine == Engine.NATIVE) {
                b.defaultServiceConfig(config.serviceConfig().toServiceConfigMap(true)).enableRetry()
                        .maxRetryAttempts(config.maxAttemptsCap()).maxHedgedAttempts(config.maxAttemptsCap());
            } else {
                RetryThrottle throttle = config.serviceConfig().retryThrottling() == null ? null
                        : new RetryThrottle(config.serviceConfig().retryThrottling());
                interceptor = RetryingClientInterceptor.builder(config).throttle(throttle).scheduler(scheduler).build();
                // grpc-java's retry stays on below the engine, as on a Netty channel: transparent retries only
                b.defaultServiceConfig(config.serviceConfig().toServiceConfigMap(false)).enableRetry()
                        .intercept(interceptor);
            }
            ManagedChannel channel = b.build();
            try {
                Observation o = drive(script, channel, server, quietMillis);
                if (interceptor != null && interceptor.bufferPool().used() != 0) {
                    List<String> problems = new ArrayList<>(o.contractProblems());
                    problems.add(interceptor.bufferPool().used() + " request bytes still held after the call");
                    o = new Observation(o.arrivals(), o.written(), o.headers(), o.responses(), o.code(),
                            o.causeIsApplicationFault(), problems);
                }
                return o;
            } finally {
                channel.shutdownNow();
                channel.awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    private static MethodDescriptor<SimpleRequest, SimpleResponse> method(App app) {
        return switch (app.method()) {
            case UNARY -> Rpc.UNARY;
            case CLIENT_STREAMING -> Rpc.CLIENT_STREAMING;
            case SERVER_STREAMING -> Rpc.SERVER_STREAMING;
        };
    }

    private static Observation drive(DifferentialScript script, ManagedChannel channel, DifferentialServer server,
            long quietMillis) throws InterruptedException {
        App app = script.app();
        ClientCall<SimpleRequest, SimpleResponse> call = channel.newCall(method(app),
                CallOptions.DEFAULT.withExecutor(DifferentialServer.direct()));
        Application application = new Application(app, call);
        ContractListener<SimpleResponse> listener = new ContractListener<>(application);
        call.start(listener, new Metadata());
        call.request(app.initialDemand());
        application.write();

        awaitCloseOrQuiet(listener, server, quietMillis);
        long settleBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
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
        return new Observation(arrivals, written, listener.headersCount() > 0, responses,
                closed ? status.getCode().name() : NEVER,
                closed && status.getCause() instanceof ApplicationFault, problems);
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
        private final ClientCall<SimpleRequest, SimpleResponse> call;
        private final AtomicInteger wip = new AtomicInteger();
        private volatile int written;
        private volatile boolean halfClosed;
        private volatile boolean faulted;
        private boolean cancelSent; // in the drain loop
        private volatile boolean closed;
        private int received; // callbacks are serialised

        Application(App app, ClientCall<SimpleRequest, SimpleResponse> call) {
            this.app = app;
            this.call = call;
        }

        int written() {
            return written;
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
                while (!closed && !faulted && written < app.requests() && (!app.onReadyWriter() || call.isReady())) {
                    call.sendMessage(Rpc.request("q" + written));
                    written++;
                }
                if (!closed && !faulted && !halfClosed && written == app.requests()) {
                    halfClosed = true;
                    call.halfClose();
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
            if (app.fault() != Fault.NONE && !app.throwInOnReady() && app.faultAfter() == 0 && !faulted) {
                fault();
            }
        }

        @Override
        public void onMessage(SimpleResponse message) {
            received++;
            if (app.fault() != Fault.NONE && !app.throwInOnReady() && app.faultAfter() == received && !faulted) {
                fault();
            } else if (!faulted) {
                call.request(app.demandPerMessage());
            }
        }

        @Override
        public void onReady() {
            if (app.throwInOnReady() && !faulted) {
                fault();
            }
            if (app.onReadyWriter()) {
                write();
            }
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            closed = true;
        }
    }
}
