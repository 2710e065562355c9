package io.github.grpcretry.sample.traces;

import io.github.grpcretry.observation.AttemptObservationContext;
import io.grpc.Status;
import io.micrometer.core.instrument.binder.grpc.GrpcClientObservationContext;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.tracing.handler.TracingObservationHandler;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The dashboard's waterfall: the last {@value #CAPACITY} calls that the engine retried or hedged (two or
 * more attempts), each with its attempts on a time axis, the waits between them, the winner and the
 * retries it did not make, and the backend each attempt reached (its port: the sample's channels have one backend,
 * the sample's own gRPC server, so the port is all that tells attempts apart when a channel has several). Fed by the engine's per-attempt observations ({@code grpc.client.attempt},
 * children of net.devh's call observation) and the suppression events on the call's observation, kept in
 * a bounded in-memory ring: no tracing backend.
 */
public class AttemptWaterfall implements ObservationHandler<Observation.Context> {

    static final int CAPACITY = 20;
    /** The events the engine's observer puts on the call: {@code retry.suppressed.<reason>}. */
    private static final String SUPPRESSED = "retry.suppressed.";

    private final Map<Observation.ContextView, Call> open = new ConcurrentHashMap<>();
    private final ArrayDeque<Call> ring = new ArrayDeque<>(CAPACITY);

    /**
     * One attempt as drawn: times in ms from the call's start; {@code endMs} null while it runs; {@code port} the
     * backend's ({@code network.peer.port}), -1 while not known (the attempt has not reached a backend).
     */
    public record AttemptBar(int number, String kind, double startMs, Double endMs, String status, boolean winner,
            int port) {
    }

    /** A retry or hedge the engine did not make, and when. */
    public record Suppression(String reason, double atMs) {
    }

    /** One row of the waterfall. */
    public record Row(String traceId, String channel, String method, long startEpochMs, Double durationMs,
            String status, List<AttemptBar> attempts, List<Suppression> suppressed) {
    }

    /** A call being followed (guarded by itself). */
    static final class Call {
        final long startNanos = System.nanoTime();
        final long startEpochMs = System.currentTimeMillis();
        final List<long[]> times = new ArrayList<>(); // [start, end or -1] per attempt, by number - 1
        final List<AttemptObservationContext> contexts = new ArrayList<>();
        final List<Suppression> suppressed = new ArrayList<>();
        String traceId;
        String channel;
        String method;
        long endNanos = -1;
        String status;

        double ms(long nanos) {
            return Math.round((nanos - startNanos) / 1e4) / 100.0;
        }

        synchronized Row row() {
            List<AttemptBar> bars = new ArrayList<>(times.size());
            for (int i = 0; i < times.size(); i++) {
                AttemptObservationContext c = contexts.get(i);
                long[] t = times.get(i);
                Status.Code code = c.getStatusCode();
                bars.add(new AttemptBar(c.getAttemptNumber(), c.getAttemptKind().tagValue(), ms(t[0]),
                        t[1] < 0 ? null : ms(t[1]), code == null ? "running" : code.name(), c.isCommitted(),
                        c.getPeerPort()));
            }
            return new Row(traceId, channel, method, startEpochMs, endNanos < 0 ? null : ms(endNanos), status, bars,
                    List.copyOf(suppressed));
        }

        synchronized int attempts() {
            return times.size();
        }
    }

    @Override
    public boolean supportsContext(Observation.Context context) {
        return context instanceof AttemptObservationContext || context instanceof GrpcClientObservationContext;
    }

    @Override
    public void onStart(Observation.Context context) {
        if (context instanceof AttemptObservationContext attempt && context.getParentObservation() != null) {
            Call call = open.computeIfAbsent(context.getParentObservation().getContextView(), k -> new Call());
            synchronized (call) {
                call.channel = attempt.getTarget().channel();
                call.method = attempt.getTarget().fullMethodName();
                while (call.times.size() < attempt.getAttemptNumber()) {
                    call.times.add(new long[] {System.nanoTime(), -1});
                    call.contexts.add(attempt);
                }
                call.contexts.set(attempt.getAttemptNumber() - 1, attempt);
            }
            context.put(Call.class, call);
        }
    }

    @Override
    public void onEvent(Observation.Event event, Observation.Context context) {
        Call call = open.get(context);
        if (call != null && event.getName().startsWith(SUPPRESSED)) {
            synchronized (call) {
                call.suppressed.add(new Suppression(event.getName().substring(SUPPRESSED.length()),
                        call.ms(System.nanoTime())));
            }
        }
    }

    @Override
    public void onStop(Observation.Context context) {
        if (context instanceof AttemptObservationContext attempt) {
            Call call = context.get(Call.class);
            if (call != null) {
                synchronized (call) {
                    call.times.get(attempt.getAttemptNumber() - 1)[1] = System.nanoTime(); // a loser may end after the call
                }
            }
            return;
        }
        Call call = open.remove(context);
        if (call == null) {
            return; // no attempt observed: a call without retry policy
        }
        synchronized (call) {
            call.endNanos = System.nanoTime();
            var status = context.getLowCardinalityKeyValue("grpc.status_code");
            call.status = status == null ? null : status.getValue();
            TracingObservationHandler.TracingContext tracing = context.get(TracingObservationHandler.TracingContext.class);
            call.traceId = tracing == null || tracing.getSpan() == null ? null : tracing.getSpan().context().traceId();
        }
        if (call.attempts() >= 2) {
            synchronized (ring) {
                if (ring.size() == CAPACITY) {
                    ring.removeFirst();
                }
                ring.addLast(call);
            }
        }
    }

    /** The rows, oldest first. */
    public List<Row> rows() {
        List<Call> calls;
        synchronized (ring) {
            calls = new ArrayList<>(ring);
        }
        return calls.stream().map(Call::row).toList();
    }
}
