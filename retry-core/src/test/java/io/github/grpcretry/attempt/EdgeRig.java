package io.github.grpcretry.attempt;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-process server whose every arrival is answered by a {@link Behaviour} chosen by its index, and
 * the engine's client on it: for the tests of the call contract at the engine's edges (flow control,
 * cancellation, listener faults, shut-down). The server records each arrival (messages read, whether it
 * was cancelled); the engine's events are recorded too, with a latch per kind the tests wait on.
 */
final class EdgeRig implements AutoCloseable {

    /** One arrival as the server saw it. */
    static final class Arrival {
        final int index;
        final ServerCall<SimpleRequest, SimpleResponse> call;
        final List<String> messages = new CopyOnWriteArrayList<>();
        final CountDownLatch cancelled = new CountDownLatch(1);
        final CountDownLatch halfClosed = new CountDownLatch(1);

        Arrival(int index, ServerCall<SimpleRequest, SimpleResponse> call) {
            this.index = index;
            this.call = call;
        }

        void respond(int messages, Status status) {
            call.sendHeaders(new Metadata());
            for (int i = 0; i < messages; i++) {
                call.sendMessage(SimpleResponse.newBuilder().setResponseMessage("r" + i).build());
            }
            call.close(status, new Metadata());
        }

        void fail(Status status, Metadata trailers) {
            call.close(status, trailers);
        }
    }

    /** What the server does with an arrival: at its start, with each message, at half-close. */
    interface Behaviour {
        default void started(Arrival a) {
            a.call.request(1);
        }

        default void message(Arrival a, SimpleRequest m) {
            a.call.request(1);
        }

        default void halfClosed(Arrival a) {
            a.respond(1, Status.OK);
        }
    }

    /** Reads every message one at a time and answers the count of messages at half-close. */
    static final Behaviour COUNT = new Behaviour() {
        @Override
        public void halfClosed(Arrival a) {
            a.call.sendHeaders(new Metadata());
            a.call.sendMessage(SimpleResponse.newBuilder().setResponseMessage(String.valueOf(a.messages.size())).build());
            a.call.close(Status.OK, new Metadata());
        }
    };

    final ConcurrentLinkedQueue<Arrival> arrivals = new ConcurrentLinkedQueue<>();
    final RecordingEvents events = new RecordingEvents();
    final CountDownLatch retryScheduled = new CountDownLatch(1);
    final CountDownLatch committed = new CountDownLatch(1);
    /** One permit per attempt whose end the engine reported. */
    final java.util.concurrent.Semaphore attemptEnds = new java.util.concurrent.Semaphore(0);
    final RetryScheduler scheduler;
    final RetryingClientInterceptor engine;
    final ManagedChannel channel;
    private final Server server;
    private final AtomicInteger count = new AtomicInteger();
    private volatile java.util.function.IntFunction<Behaviour> script = i -> COUNT;

    EdgeRig(ChannelRetryConfig config, boolean direct) throws IOException {
        String name = "edge-" + System.nanoTime();
        ServerServiceDefinition.Builder def = ServerServiceDefinition.builder(Configs.SERVICE);
        for (MethodDescriptor<SimpleRequest, SimpleResponse> m : List.of(Rpc.UNARY, Rpc.CLIENT_STREAMING,
                Rpc.SERVER_STREAMING, Rpc.BIDI)) {
            def.addMethod(m, handler());
        }
        InProcessServerBuilder sb = InProcessServerBuilder.forName(name).addService(def.build());
        server = (direct ? sb.directExecutor() : sb).build().start();
        scheduler = RetryScheduler.create(1, "edge");
        RetryEventListener listener = new RetryEventListener() {
            @Override
            public void attemptStarted(CallTarget target, AttemptKind kind, int attemptNumber) {
                events.attemptStarted(target, kind, attemptNumber);
            }

            @Override
            public void attemptEnded(CallTarget target, AttemptKind kind, int attemptNumber, Status.Code code) {
                events.attemptEnded(target, kind, attemptNumber, code);
                attemptEnds.release();
            }

            @Override
            public void retryScheduled(CallTarget target, int nextAttemptNumber, long delayNanos,
                    DelaySource source) {
                events.retryScheduled(target, nextAttemptNumber, delayNanos, source);
                retryScheduled.countDown();
            }

            @Override
            public void committed(CallTarget target, int attemptNumber) {
                events.committed(target, attemptNumber);
                committed.countDown();
            }

            @Override
            public void retrySuppressed(CallTarget target, SuppressionReason reason, Status.Code code) {
                events.retrySuppressed(target, reason, code);
            }

            @Override
            public void callEnded(CallTarget target, Status.Code code, int retries, int hedges,
                    int transparentRetries, long delayNanos) {
                events.callEnded(target, code, retries, hedges, transparentRetries, delayNanos);
            }
        };
        engine = RetryingClientInterceptor.builder(config).eventListener(listener).scheduler(scheduler).build();
        InProcessChannelBuilder cb = InProcessChannelBuilder.forName(name);
        channel = (direct ? cb.directExecutor() : cb)
                .defaultServiceConfig(config.serviceConfig().toServiceConfigMap(false))
                .intercept(engine)
                .build();
    }

    /** Answers arrival {@code i} (from 0) with {@code script.apply(i)}. */
    EdgeRig script(java.util.function.IntFunction<Behaviour> s) {
        this.script = s;
        return this;
    }

    Arrival arrival(int index) {
        for (Arrival a : arrivals) {
            if (a.index == index) {
                return a;
            }
        }
        throw new AssertionError("no arrival " + index + " of " + arrivals.size());
    }

    private ServerCallHandler<SimpleRequest, SimpleResponse> handler() {
        return (call, headers) -> {
            Arrival a = new Arrival(count.getAndIncrement(), call);
            arrivals.add(a);
            Behaviour b = script.apply(a.index);
            b.started(a);
            return new ServerCall.Listener<>() {
                @Override
                public void onMessage(SimpleRequest message) {
                    a.messages.add(message.getRequestMessage());
                    b.message(a, message);
                }

                @Override
                public void onHalfClose() {
                    a.halfClosed.countDown();
                    b.halfClosed(a);
                }

                @Override
                public void onCancel() {
                    a.cancelled.countDown();
                }
            };
        };
    }

    /** A new call of {@code method} on the engine's channel. */
    ClientCall<SimpleRequest, SimpleResponse> call(MethodDescriptor<SimpleRequest, SimpleResponse> method,
            io.grpc.CallOptions options) {
        return channel.newCall(method, options);
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow();
        channel.awaitTermination(5, TimeUnit.SECONDS);
        scheduler.close();
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
    }
}
