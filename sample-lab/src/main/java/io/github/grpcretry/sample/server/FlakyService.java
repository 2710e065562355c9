package io.github.grpcretry.sample.server;

import io.github.grpcretry.sample.proto.FeedItem;
import io.github.grpcretry.sample.proto.FeedRequest;
import io.github.grpcretry.sample.proto.FlakyGrpc;
import io.github.grpcretry.sample.proto.FlakyReply;
import io.github.grpcretry.sample.proto.FlakyRequest;
import io.github.grpcretry.sample.proto.Script;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sample's backend: a real gRPC service whose failures each request scripts (fail the first N
 * attempts, fail with a probability, a chosen code, headers before failing, a pushback trailer,
 * sleeps), and a numbered stream a client resumes by offset ({@code Feed}). It counts attempts per call key and
 * logs each arrival with the
 * {@code grpc-previous-rpc-attempts} header the client sent. Plain Java: each sample serves it its own
 * way (behind {@link AttemptHeaderInterceptor}), and {@link FlakyServer} serves it outside Spring.
 */
public class FlakyService extends FlakyGrpc.FlakyImplBase {

    private static final Logger log = LoggerFactory.getLogger(FlakyService.class);
    static final Metadata.Key<String> PUSHBACK = Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER);

    /** Timers for scripted sleeps, shared by every instance (daemon: never keeps the JVM alive). */
    private static final ScheduledExecutorService DELAYS = Executors.newScheduledThreadPool(2, r -> {
        Thread t = new Thread(r, "flaky-delay");
        t.setDaemon(true);
        return t;
    });

    private final ArrivalLog arrivals;
    private final FaultScript faults;
    private final Admission admission;
    /** Queue mode: the server's capacity (null: every attempt is answered at once). */
    private final QueueingBackend queue;
    /** The keys of the feeds that have stalled (each stalls once). */
    private final Set<String> stalled = ConcurrentHashMap.newKeySet();

    /** Decides whether the server has room for an attempt at all (a capacity limit); null = admitted. */
    @FunctionalInterface
    public interface Admission {
        Status admit();
    }

    public FlakyService(ArrivalLog arrivals, FaultScript faults) {
        this(arrivals, faults, () -> null, null);
    }

    public FlakyService(ArrivalLog arrivals, FaultScript faults, Admission admission) {
        this(arrivals, faults, admission, null);
    }

    /** The demo's backend: queue mode with the application's {@link QueueingBackend}. */
    public FlakyService(ArrivalLog arrivals, FaultScript faults, QueueingBackend queue) {
        this(arrivals, faults, () -> null, queue);
    }

    /**
     * Queue mode when {@code queue} is not null: an attempt the script lets succeed waits in the
     * queue for a worker (the server's capacity) before it is answered; a scripted failure is answered
     * at once (the server rejects it without work), and a scripted sleep is added after the service
     * (latency outside the workers, so it does not lower the capacity).
     */
    public FlakyService(ArrivalLog arrivals, FaultScript faults, Admission admission, QueueingBackend queue) {
        this.arrivals = arrivals;
        this.faults = faults;
        this.admission = admission;
        this.queue = queue;
    }

    @Override
    public void call(FlakyRequest request, StreamObserver<FlakyReply> responses) {
        answer(request.getKey(), request.getScript(), request.getPayload().size(), responses, 1);
    }

    @Override
    public void download(FlakyRequest request, StreamObserver<FlakyReply> responses) {
        answer(request.getKey(), request.getScript(), request.getPayload().size(), responses, 3);
    }

    /**
     * The items {@code from} to {@code count - 1}, as fast as the client reads them (flow control: an item is sent
     * only while the call is ready), broken and stalled as the request asks.
     */
    @Override
    public void feed(FeedRequest request, StreamObserver<FeedItem> responses) {
        int attempt = arrivals.record(request.getKey(), AttemptHeaderInterceptor.previousAttempts());
        new Feed(request, attempt, (ServerCallStreamObserver<FeedItem>) responses).start();
    }

    /** One attempt of a feed; its methods run one at a time (the call's callbacks and the end of a stall). */
    private final class Feed {
        private final FeedRequest request;
        private final int attempt;
        private final ServerCallStreamObserver<FeedItem> out;
        private long next;
        private boolean stalling;
        private boolean done;

        Feed(FeedRequest request, int attempt, ServerCallStreamObserver<FeedItem> out) {
            this.request = request;
            this.attempt = attempt;
            this.out = out;
            this.next = request.getFrom();
        }

        void start() {
            out.setOnCancelHandler(this::cancelled);
            out.setOnReadyHandler(this::send);
            send();
        }

        private synchronized void cancelled() {
            done = true;
        }

        private synchronized void send() {
            while (!done && !stalling && out.isReady()) {
                if (next >= request.getCount()) {
                    done = true;
                    out.onCompleted();
                    return;
                }
                if (next != request.getFrom()) {
                    if (request.getBreakEvery() > 0 && next % request.getBreakEvery() == 0) {
                        done = true;
                        out.onError(Status.UNAVAILABLE.withDescription("feed broken before " + next).asRuntimeException());
                        return;
                    }
                    if (request.getStallAt() > 0 && next == request.getStallAt() && stalled.add(request.getKey())) {
                        stalling = true;
                        DELAYS.schedule(this::stallEnded, request.getStallMs(), TimeUnit.MILLISECONDS);
                        return;
                    }
                }
                out.onNext(FeedItem.newBuilder().setOffset(next++).setAttempt(attempt).build());
            }
        }

        private synchronized void stallEnded() {
            stalling = false;
            send();
        }
    }

    @Override
    public StreamObserver<FlakyRequest> upload(StreamObserver<FlakyReply> responses) {
        return collecting(requests -> {
            FlakyRequest first = requests.isEmpty() ? FlakyRequest.getDefaultInstance() : requests.get(0);
            int bytes = requests.stream().mapToInt(r -> r.getPayload().size()).sum();
            answer(first.getKey(), first.getScript(), bytes, responses, 1);
        });
    }

    @Override
    public StreamObserver<FlakyRequest> chat(StreamObserver<FlakyReply> responses) {
        return collecting(requests -> {
            FlakyRequest first = requests.isEmpty() ? FlakyRequest.getDefaultInstance() : requests.get(0);
            answer(first.getKey(), first.getScript(), first.getPayload().size(), responses, requests.size());
        });
    }

    private StreamObserver<FlakyRequest> collecting(java.util.function.Consumer<List<FlakyRequest>> onComplete) {
        List<FlakyRequest> received = new ArrayList<>();
        return new StreamObserver<>() {
            @Override
            public void onNext(FlakyRequest value) {
                received.add(value);
            }

            @Override
            public void onError(Throwable t) {
                // the client cancelled this attempt
            }

            @Override
            public void onCompleted() {
                onComplete.accept(received);
            }
        };
    }

    private void answer(String key, Script script, int payloadSize, StreamObserver<FlakyReply> responses, int replies) {
        int previous = AttemptHeaderInterceptor.previousAttempts();
        int attempt = arrivals.record(key, previous);
        Status rejected = admission.admit();
        if (rejected != null) {
            responses.onError(rejected.asRuntimeException());
            return;
        }
        FaultScript.Decision decision = faults.decide(script, attempt);
        // a scripted sleep never holds a server thread: the answer is scheduled, in the call's Context
        Runnable reply = Context.current().wrap(
                () -> respond(key, attempt, previous, decision, payloadSize, responses, replies));
        if (queue != null && !decision.fails()) {
            Status full = queue.submit(new QueuedAttempt(Context.current(), responses, reply, decision.sleepMs()));
            if (full != null) {
                responses.onError(full.asRuntimeException());
            }
            return;
        }
        if (decision.sleepMs() > 0) {
            DELAYS.schedule(reply, decision.sleepMs(), TimeUnit.MILLISECONDS);
        } else {
            reply.run();
        }
    }

    /** An attempt waiting in the queue: its deadline is its gRPC Context's, as deadline propagation set it. */
    private record QueuedAttempt(Context context, StreamObserver<FlakyReply> responses, Runnable reply, long sleepMs)
            implements QueueingBackend.Job {

        @Override
        public io.grpc.Deadline deadline() {
            return context.getDeadline();
        }

        @Override
        public boolean cancelled() {
            return context.isCancelled()
                    || responses instanceof ServerCallStreamObserver<?> server && server.isCancelled();
        }

        @Override
        public void complete() {
            if (sleepMs > 0) {
                DELAYS.schedule(reply, sleepMs, TimeUnit.MILLISECONDS);
            } else {
                reply.run();
            }
        }

        @Override
        public void abandon(Status status) {
            context.run(() -> responses.onError(status.asRuntimeException()));
        }
    }

    private void respond(String key, int attempt, int previous, FaultScript.Decision decision, int payloadSize,
            StreamObserver<FlakyReply> responses, int replies) {
        if (responses instanceof ServerCallStreamObserver<?> server && server.isCancelled()) {
            log.debug("key={} attempt={} cancelled by the client", key, attempt);
            return;
        }
        if (decision.fails()) {
            log.debug("key={} attempt={} grpc-previous-rpc-attempts={} -> {}{}", key, attempt,
                    previous < 0 ? "-" : previous, decision.failure().getCode(),
                    decision.pushbackMs() == null ? "" : " (pushback " + decision.pushbackMs() + " ms)");
            if (decision.headersFirst()) {
                AttemptHeaderInterceptor.requestHeadersBeforeClose();
            }
            Metadata trailers = new Metadata();
            if (decision.pushbackMs() != null) {
                trailers.put(PUSHBACK, decision.pushbackMs());
            }
            responses.onError(decision.failure().asRuntimeException(trailers));
            return;
        }
        log.debug("key={} attempt={} grpc-previous-rpc-attempts={} -> OK", key, attempt, previous < 0 ? "-" : previous);
        for (int i = 0; i < replies; i++) {
            responses.onNext(FlakyReply.newBuilder().setKey(key).setAttempt(attempt).setPreviousAttempts(previous)
                    .setPayloadSize(payloadSize).build());
        }
        responses.onCompleted();
    }
}
