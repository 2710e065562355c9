package io.github.grpcretry.springgrpc.testing;

import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

/**
 * A {@code grpc.testing.SimpleService} for Spring gRPC server contexts whose unary method answers as a
 * script says. The request's {@code request_message} up to the first {@code '|'} is the scenario key;
 * every arrival is recorded per key (time, the {@code grpc-previous-rpc-attempts} header, the deadline
 * left), and the script gets the key and the arrival's index (0 for the first).
 */
public class ScriptedService extends SimpleServiceGrpc.SimpleServiceImplBase {

    /** What the server does with one arrival. */
    public sealed interface Action permits Ok, Fail, DelayedOk, Hang {
    }

    /** Answer at once. */
    public record Ok() implements Action {
    }

    /** Close with {@code status}; {@code pushbackMs} (when not null) goes into {@code grpc-retry-pushback-ms}. */
    public record Fail(Status status, String pushbackMs) implements Action {
    }

    /** Answer after {@code millis}. */
    public record DelayedOk(long millis) implements Action {
    }

    /** Never answer (the caller's deadline or cancellation ends the call). */
    public record Hang() implements Action {
    }

    public static Action ok() {
        return new Ok();
    }

    public static Action fail(Status.Code code) {
        return new Fail(code.toStatus(), null);
    }

    public static Action fail(Status.Code code, String pushbackMs) {
        return new Fail(code.toStatus(), pushbackMs);
    }

    public static Action delayedOk(long millis) {
        return new DelayedOk(millis);
    }

    public static Action hang() {
        return new Hang();
    }

    /** One arrival as the server saw it. */
    public record Arrival(long nanoTime, String previousAttempts, Long deadlineRemainingMillis) {
    }

    /** Header the server reads (grpc-java and the engine both send it on retries and hedges). */
    public static final Metadata.Key<String> PREVIOUS_ATTEMPTS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);

    static final Metadata.Key<String> PUSHBACK = Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER);

    /** The headers of the call being served (set by {@link HeaderCapture}). */
    static final Context.Key<Metadata> HEADERS = Context.key("scripted-service-headers");

    private final BiFunction<String, Integer, Action> script;
    private final Map<String, List<Arrival>> arrivals = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "scripted-service-timer");
        t.setDaemon(true);
        return t;
    });

    /** @param script (scenario key, arrival index) → what to do */
    public ScriptedService(BiFunction<String, Integer, Action> script) {
        this.script = script;
    }

    @Override
    public void unaryRpc(SimpleRequest request, StreamObserver<SimpleResponse> observer) {
        String message = request.getRequestMessage();
        int bar = message.indexOf('|');
        String key = bar < 0 ? message : message.substring(0, bar);
        Metadata headers = HEADERS.get();
        Deadline deadline = Context.current().getDeadline();
        List<Arrival> list = arrivals.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>());
        int index;
        synchronized (list) {
            index = list.size();
            list.add(new Arrival(System.nanoTime(), headers == null ? null : headers.get(PREVIOUS_ATTEMPTS),
                    deadline == null ? null : deadline.timeRemaining(TimeUnit.MILLISECONDS)));
        }
        Action action = script.apply(key, index);
        SimpleResponse response = SimpleResponse.newBuilder().setResponseMessage(key + " #" + index).build();
        if (action instanceof Ok) {
            observer.onNext(response);
            observer.onCompleted();
        } else if (action instanceof Fail f) {
            Metadata trailers = new Metadata();
            if (f.pushbackMs() != null) {
                trailers.put(PUSHBACK, f.pushbackMs());
            }
            observer.onError(f.status().withDescription("scripted: " + key + " #" + index).asRuntimeException(trailers));
        } else if (action instanceof DelayedOk d) {
            ServerCallStreamObserver<SimpleResponse> call = (ServerCallStreamObserver<SimpleResponse>) observer;
            timer.schedule(() -> {
                if (!call.isCancelled()) {
                    observer.onNext(response);
                    observer.onCompleted();
                }
            }, d.millis(), TimeUnit.MILLISECONDS);
        }
        // Hang: nothing.
    }

    /** The arrivals recorded for {@code key} (empty when none). */
    public List<Arrival> arrivals(String key) {
        return List.copyOf(arrivals.getOrDefault(key, List.of()));
    }

    /** How many arrivals {@code key} had. */
    public int count(String key) {
        return arrivals.getOrDefault(key, List.of()).size();
    }

    /** Arrivals of every key. */
    public int total() {
        return arrivals.values().stream().mapToInt(List::size).sum();
    }
}
