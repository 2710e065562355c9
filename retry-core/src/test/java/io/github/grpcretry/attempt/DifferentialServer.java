package io.github.grpcretry.attempt;

import com.google.common.util.concurrent.MoreExecutors;
import io.github.grpcretry.attempt.DifferentialScript.Answer;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The in-process server of one differential script, on a direct executor: arrival i gets the
 * script's answer i and is recorded ({@code grpc-previous-rpc-attempts}, the request messages it
 * read, how it ended). Responses name their arrival ({@code "a2:r0"}), so the application's
 * messages show which attempt they came from.
 */
final class DifferentialServer implements AutoCloseable {

    /** How an arrival ended, as the server saw it. */
    enum End { OPEN, CLOSED, CANCELLED }

    /** One arrival. Written under the server's lock. */
    static final class Arrival {
        final int index;
        final Integer previousAttempts;
        final List<String> messages = new ArrayList<>();
        End end = End.OPEN;

        Arrival(int index, Integer previousAttempts) {
            this.index = index;
            this.previousAttempts = previousAttempts;
        }

        /**
         * As the engines are compared: whether the arrival ended, not how. Which of the server's close and a
         * cancel the client sends from a callback of that very answer lands first depends on how the
         * in-process transport nests direct-executor callbacks, not on an engine's rules; an attempt left
         * open is compared.
         */
        @Override
        public String toString() {
            return "#" + index + "(prev=" + previousAttempts + ", read=" + messages
                    + (end == End.OPEN ? ", OPEN)" : ")");
        }
    }

    private final DifferentialScript script;
    private final List<Arrival> arrivals = new ArrayList<>();
    private final String name;
    private final Server server;
    /** Shuts the client's channel down, where the script's twist says so. */
    private volatile Runnable shutdown = () -> { };

    DifferentialServer(DifferentialScript script, String name) throws IOException {
        this.script = script;
        this.name = name;
        ServerServiceDefinition.Builder b = ServerServiceDefinition.builder(SimpleServiceGrpc.getServiceDescriptor());
        for (MethodDescriptor<SimpleRequest, SimpleResponse> m : List.of(SimpleServiceGrpc.getUnaryRpcMethod(),
                SimpleServiceGrpc.getClientStreamingRpcMethod(), SimpleServiceGrpc.getServerStreamingRpcMethod(),
                SimpleServiceGrpc.getBidiStreamingRpcMethod())) { // bidi unused, bound as the service requires
            ServerCallHandler<SimpleRequest, SimpleResponse> h = (call, headers) -> arrive(m.getType(), call, headers);
            b.addMethod(m, h);
        }
        server = InProcessServerBuilder.forName(name).directExecutor().addService(b.build()).build().start();
    }

    String name() {
        return name;
    }

    /** What shuts the client's channel down (the channel is built after the server). */
    void shutdownBy(Runnable action) {
        this.shutdown = action;
    }

    /** Shuts the channel down if the twist names this arrival at this moment. */
    private void shutdownAt(Arrival arrival, boolean atArrival) {
        DifferentialScript.Twist t = script.twist();
        if (t.shutdown() && t.arrival() == arrival.index && t.atArrival() == atArrival) {
            shutdown.run();
        }
    }

    /** A copy of the arrivals so far. */
    synchronized List<Arrival> arrivals() {
        List<Arrival> copy = new ArrayList<>();
        for (Arrival a : arrivals) {
            Arrival c = new Arrival(a.index, a.previousAttempts);
            c.messages.addAll(a.messages);
            c.end = a.end;
            copy.add(c);
        }
        return copy;
    }

    /** Whether every arrival so far has ended (closed by the server or cancelled by the client). */
    synchronized boolean settled() {
        return arrivals.stream().allMatch(a -> a.end != End.OPEN);
    }

    private ServerCall.Listener<SimpleRequest> arrive(MethodDescriptor.MethodType type,
            ServerCall<SimpleRequest, SimpleResponse> call, Metadata headers) {
        String prev = headers.get(ScriptedServer.PREVIOUS_ATTEMPTS);
        Arrival arrival;
        synchronized (this) {
            arrival = new Arrival(arrivals.size() + 1, prev == null ? null : Integer.valueOf(prev));
            arrivals.add(arrival);
        }
        return new Exchange(type, call, arrival).begin();
    }

    /**
     * One arrival's server call, answered by its script line. The record is written under the
     * server's lock; calls into the server call are made outside it (with direct executors they run
     * the client's code on this thread).
     */
    private final class Exchange extends ServerCall.Listener<SimpleRequest> {
        private final MethodDescriptor.MethodType type;
        private final ServerCall<SimpleRequest, SimpleResponse> call;
        private final Arrival arrival;
        private final Answer answer;
        private boolean responding; // under the server's lock

        Exchange(MethodDescriptor.MethodType type, ServerCall<SimpleRequest, SimpleResponse> call, Arrival arrival) {
            this.type = type;
            this.call = call;
            this.arrival = arrival;
            this.answer = script.answer(arrival.index);
        }

        Exchange begin() {
            call.request(answer.pullOneByOne() ? 1 : Integer.MAX_VALUE);
            shutdownAt(arrival, true);
            if (!answer.ok() && answer.atArrival()) {
                respond();
            }
            return this;
        }

        @Override
        public void onMessage(SimpleRequest message) {
            boolean more;
            synchronized (DifferentialServer.this) {
                arrival.messages.add(message.getRequestMessage());
                more = answer.pullOneByOne() && !responding;
            }
            if (more) {
                call.request(1);
            }
        }

        @Override
        public void onHalfClose() {
            if (answer.ok() || !answer.atArrival()) {
                respond();
            }
        }

        /** The client cancelled before the server's close was final (grpc-java reports no cancel after it). */
        @Override
        public void onCancel() {
            synchronized (DifferentialServer.this) {
                arrival.end = End.CANCELLED;
            }
        }

        /** Sends the scripted responses and status, once. */
        private void respond() {
            List<String> read;
            synchronized (DifferentialServer.this) {
                if (responding || arrival.end != End.OPEN) {
                    return;
                }
                responding = true;
                read = List.copyOf(arrival.messages);
            }
            try {
                if (answer.headersFirst() || answer.messages() > 0) {
                    call.sendHeaders(new Metadata());
                }
                for (int i = 0; i < answer.messages(); i++) {
                    String body = type == MethodDescriptor.MethodType.SERVER_STREAMING ? "r" + i
                            : String.join(",", read);
                    call.sendMessage(SimpleResponse.newBuilder().setResponseMessage("a" + arrival.index + ":" + body)
                            .build());
                }
                Metadata trailers = new Metadata();
                if (answer.pushback() != null) {
                    trailers.put(ScriptedServer.PUSHBACK, answer.pushback());
                }
                call.close(Status.fromCode(answer.code()).withDescription("scripted #" + arrival.index), trailers);
                synchronized (DifferentialServer.this) {
                    if (arrival.end == End.OPEN) {
                        arrival.end = End.CLOSED;
                    }
                }
                shutdownAt(arrival, false);
            } catch (IllegalStateException e) {
                synchronized (DifferentialServer.this) {
                    arrival.end = End.CANCELLED; // the client cancelled while the answer was being sent
                }
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
    }

    static String uniqueName(long seed, String engine) {
        return "differential-" + engine + "-" + seed + "-" + System.nanoTime();
    }

    static java.util.concurrent.Executor direct() {
        return MoreExecutors.directExecutor();
    }
}
