package io.github.grpcretry.sample.traces;

import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs the trace of every call the engine retried or hedged, and nothing else: spans are held per trace
 * until the call's span (the client span that is not an attempt) ends; when the call had two or more
 * attempt spans, a one-line summary (trace id, each attempt with its status and the wait before it, the
 * retries not made) is logged and the trace's spans go to {@code delegate} (OpenTelemetry's logging
 * exporter: the log, no network). A hedge that lost and ends after its call is passed on alone. Bounded:
 * at most {@value #MAX_TRACES} traces are held, and at most {@value #PER_SECOND} retried calls a second
 * are logged in full (the others are counted in the next summary line).
 */
public class RetriedCallSpanExporter implements SpanExporter {

    static final int MAX_TRACES = 2000;
    static final int PER_SECOND = 5;
    private static final String ATTEMPT_PREFIX = "Attempt.";
    private static final Logger log = LoggerFactory.getLogger(RetriedCallSpanExporter.class);

    private final SpanExporter delegate;
    private final Map<String, List<SpanData>> held = new LinkedHashMap<>(256, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, List<SpanData>> eldest) {
            return size() > MAX_TRACES;
        }
    };
    private final Map<String, Boolean> logged = new LinkedHashMap<>(256, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > MAX_TRACES;
        }
    };

    private long second;
    private int loggedThisSecond;
    private int skipped;

    public RetriedCallSpanExporter(SpanExporter delegate) {
        this.delegate = delegate;
    }

    static boolean isCall(SpanData s) {
        return s.getKind() == SpanKind.CLIENT && !s.getName().startsWith(ATTEMPT_PREFIX);
    }

    @Override
    public CompletableResultCode export(Collection<SpanData> spans) {
        List<SpanData> out = new ArrayList<>();
        synchronized (this) {
            for (SpanData s : spans) {
                String trace = s.getTraceId();
                if (logged.containsKey(trace)) {
                    out.add(s); // a late span (a hedge that lost) of a trace already logged
                    continue;
                }
                held.computeIfAbsent(trace, t -> new ArrayList<>()).add(s);
                if (isCall(s)) {
                    List<SpanData> trace0 = held.remove(trace);
                    List<SpanData> attempts = trace0.stream()
                            .filter(a -> a.getName().startsWith(ATTEMPT_PREFIX) && a.getParentSpanId().equals(s.getSpanId()))
                            .sorted(Comparator.comparingLong(SpanData::getStartEpochNanos)).toList();
                    List<String> suppressed = s.getEvents().stream().map(EventData::getName)
                            .filter(n -> n.startsWith("retry.suppressed.")).toList();
                    if (attempts.size() >= 2 && admit()) {
                        logged.put(trace, Boolean.TRUE);
                        log.info("retried call {} trace {}: {}{}{}", s.getName(), trace, summary(attempts),
                                suppressed.isEmpty() ? "" : "; not retried: " + String.join(", ", suppressed),
                                skipped == 0 ? "" : " (" + skipped + " more retried calls not logged)");
                        skipped = 0;
                        out.addAll(trace0);
                    } else if (attempts.size() >= 2) {
                        skipped++;
                    }
                }
            }
        }
        return out.isEmpty() ? CompletableResultCode.ofSuccess() : delegate.export(out);
    }

    /** Whether one more retried call may be logged in full this second. */
    private boolean admit() {
        long now = System.currentTimeMillis() / 1000;
        if (now != second) {
            second = now;
            loggedThisSecond = 0;
        }
        return loggedThisSecond++ < PER_SECOND;
    }

    /**
     * "attempt 1 UNAVAILABLE 3 ms :9090 | +21 ms attempt 2 OK 2 ms :9090": each attempt, the wait before it, its
     * status, length and the backend it reached (its port, {@code network.peer.port}; the sample's channels have
     * one backend, its own gRPC server).
     */
    public static String summary(List<SpanData> attempts) {
        StringBuilder b = new StringBuilder();
        long previousEnd = -1;
        long previousStart = -1;
        for (SpanData a : attempts) {
            String n = attribute(a, "previous-rpc-attempts");
            String status = attribute(a, "grpc.status_code");
            if (previousStart >= 0) {
                long gap = a.getStartEpochNanos() < previousEnd ? a.getStartEpochNanos() - previousStart
                        : a.getStartEpochNanos() - previousEnd;
                b.append(a.getStartEpochNanos() < previousEnd ? " | hedge +" : " | +").append(gap / 1_000_000).append(" ms ");
            }
            String port = attribute(a, "network.peer.port");
            b.append("attempt ").append(n.isEmpty() ? "?" : Integer.parseInt(n) + 1).append(' ').append(status)
                    .append(' ').append((a.getEndEpochNanos() - a.getStartEpochNanos()) / 1_000_000).append(" ms")
                    .append(port.isEmpty() ? "" : " :" + port);
            previousEnd = a.getEndEpochNanos();
            previousStart = a.getStartEpochNanos();
        }
        return b.toString();
    }

    /** The span's attribute of that name as text, empty when absent. */
    private static String attribute(SpanData span, String key) {
        return span.getAttributes().asMap().entrySet().stream().filter(e -> e.getKey().getKey().equals(key))
                .map(e -> String.valueOf(e.getValue())).collect(Collectors.joining());
    }

    @Override
    public CompletableResultCode flush() {
        return delegate.flush();
    }

    @Override
    public CompletableResultCode shutdown() {
        return delegate.shutdown();
    }
}
