package io.github.grpcretry.benchmarks;

import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Heap a retrying engine retains per request it holds for replay. Opens {@code calls} client streams
 * and sends {@code messages} distinct 64-character requests on each (built fresh, referenced by
 * nothing but the channel once sent); once the server has read every one of them, and before any
 * half-close (so no call is committed), takes the live heap (a class histogram, which runs a full
 * collection first); then half-closes every call, waits for each answer and takes it again. The
 * difference per request is what the open calls retained for each request: for a bare channel only
 * its share of the calls' own state, for a retrying engine also the held request. The heap after the
 * calls ended is compared with the heap before they opened, per request, to show every held request
 * released.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.github.grpcretry.benchmarks.BufferProbe [calls] [messages] [transports]
 *   calls       default 20
 *   messages    default 1000 (per call)
 *   transports  IN_PROCESS,NETTY (default both)
 * </pre>
 */
public final class BufferProbe {

    private static final Variant[] VARIANTS = {Variant.BARE, Variant.NATIVE, Variant.INTERCEPTOR};
    /** 56 characters; each request appends 8 digits of its own. */
    private static final int TOP_CLASSES = 24;
    private static final String PREFIX = BenchConfig.REQUEST.getRequestMessage().substring(0, 56);

    private BufferProbe() {
    }

    /**
     * @param retained live bytes per request while the calls were open, minus after they ended
     * @param left live bytes per request after the calls ended, minus before they opened
     * @param byClass the classes that make up {@code retained} (bytes per request, at least 1)
     */
    record Result(Variant variant, Transport transport, double retained, double left, Map<String, Double> byClass) {
    }

    public static void main(String[] args) throws Exception {
        int calls = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int messages = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        String[] transports = args.length > 2 ? args[2].split(",") : new String[] {"IN_PROCESS", "NETTY"};
        // the engine counts what the transport reports written, as grpc-java's own retry does: uncompressed, the
        // serialised size. The in-process transport reports it only with GRPC_EXPERIMENTAL_SUPPORT_TRACING_MESSAGE_SIZES
        // set, which also turns grpc-java's retry (and its buffer) on in an in-process channel: left as it is here
        int counted = request(0).getSerializedSize();
        System.out.printf(Locale.ROOT, "%d calls x %d requests; the engine counts %d B per request against its "
                + "buffer limits over Netty (what the transport reports written: the serialised size)%n%n", calls,
                messages, counted);
        System.out.println("| transport | variant | retained B/request | − (a) | left after the calls B/request |");
        System.out.println("|---|---|---|---|---|");
        List<Result> results = new ArrayList<>();
        for (String t : transports) {
            double bare = Double.NaN;
            for (Variant v : VARIANTS) {
                Result r = measure(v, Transport.valueOf(t), calls, messages);
                results.add(r);
                if (v == Variant.BARE) {
                    bare = r.retained();
                }
                System.out.printf(Locale.ROOT, "| %s | %s | %.1f | %+.1f | %+.1f |%n", t, Report.label(v.name()),
                        r.retained(), r.retained() - bare, r.left());
            }
        }
        for (Result r : results) {
            System.out.printf(Locale.ROOT, "%n%s, %s: retained B/request by class%n", r.transport(),
                    Report.label(r.variant().name()));
            r.byClass().forEach((k, v) -> System.out.printf(Locale.ROOT, "%8.1f  %s%n", v, k));
        }
    }

    static Result measure(Variant variant, Transport transport, int calls, int messages) throws Exception {
        Semaphore received = new Semaphore(0);
        try (EchoServer server = EchoServer.start(transport, 0, received);
                Clients.Client client = Clients.open(variant, server, transport)) {
            SimpleServiceGrpc.SimpleServiceStub stub = SimpleServiceGrpc.newStub(client.channel());
            // one whole round first: classes loaded, connection up, pools at their steady size
            finish(open(stub, calls, messages, received), messages);
            long before = settledHeap(TOP_CLASSES).total();
            List<Open> open = open(stub, calls, messages, received);
            // the channel's callbacks for the last requests (onReady notices queued on its executor) may
            // still be pending when the server has read them: they would count as retained per request
            Heap during = settledHeap(TOP_CLASSES);
            finish(open, messages);
            open = null;
            Heap after = Heap.live(0);
            double requests = (double) calls * messages;
            Map<String, Double> byClass = new LinkedHashMap<>();
            during.top().entrySet().stream()
                    .map(e -> Map.entry(e.getKey(), (e.getValue() - after.bytesOf(e.getKey())) / requests))
                    .filter(e -> e.getValue() >= 1)
                    .sorted((x, y) -> Double.compare(y.getValue(), x.getValue()))
                    .forEach(e -> byClass.put(e.getKey(), e.getValue()));
            return new Result(variant, transport, (during.total() - after.total()) / requests,
                    (after.total() - before) / requests, byClass);
        }
    }

    /**
     * The live heap once whatever ran before (channels still shutting down, callbacks still queued, other
     * work in the same JVM) has stopped changing it: two readings in a row within 4 KB, or the last of 20.
     */
    private static Heap settledHeap(int top) throws Exception {
        Heap last = Heap.live(top);
        for (int i = 0; i < 20; i++) {
            Heap now = Heap.live(top);
            if (Math.abs(now.total() - last.total()) < 4096) {
                return now;
            }
            last = now;
        }
        return last;
    }

    /**
     * The live heap: its total and the bytes of its {@code top} largest classes. Kept this small on
     * purpose: whatever a measurement keeps alive is counted by the next one (the top classes of
     * the open calls' heap, a few KB, are still alive when the heap after them is taken).
     */
    private record Heap(long total, Map<String, Long> top, Map<String, long[]> all) {

        static Heap live(int top) throws Exception {
            Map<String, long[]> histogram = AllocationProbe.classHistogram(false);
            long total = 0;
            for (long[] v : histogram.values()) {
                total += v[1];
            }
            Map<String, Long> largest = new LinkedHashMap<>();
            histogram.entrySet().stream()
                    .sorted((x, y) -> Long.compare(y.getValue()[1], x.getValue()[1]))
                    .limit(top)
                    .forEach(e -> largest.put(e.getKey(), e.getValue()[1]));
            return new Heap(total, largest, top == 0 ? histogram : Map.of());
        }

        long bytesOf(String cls) {
            long[] v = all.get(cls);
            return v == null ? 0 : v[1];
        }
    }

    private record Open(StreamObserver<SimpleRequest> requests, StreamingBenchmark.Responses<SimpleResponse> response) {
    }

    /** Opens the calls and sends every request; returns once the server has read them all. */
    private static List<Open> open(SimpleServiceGrpc.SimpleServiceStub stub, int calls, int messages,
            Semaphore received) throws InterruptedException {
        List<Open> open = new ArrayList<>(calls);
        int seq = 0;
        for (int c = 0; c < calls; c++) {
            StreamingBenchmark.Responses<SimpleResponse> response = new StreamingBenchmark.Responses<>();
            StreamObserver<SimpleRequest> requests = stub.clientStreamingRpc(response);
            for (int i = 0; i < messages; i++) {
                requests.onNext(request(seq++));
            }
            open.add(new Open(requests, response));
        }
        if (!received.tryAcquire(calls * messages, 30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the server read " + received.availablePermits() + " of "
                    + calls * messages + " requests in 30 s");
        }
        return open;
    }

    /** Half-closes every call and checks that the server counted all its requests. */
    private static void finish(List<Open> open, int messages) throws InterruptedException {
        for (Open o : open) {
            o.requests().onCompleted();
        }
        for (Open o : open) {
            String answer = o.response().closed().last().getResponseMessage();
            if (!Integer.toString(messages).equals(answer)) {
                throw new IllegalStateException("server counted " + answer + " of " + messages);
            }
        }
    }

    /** A fresh 64-character request, distinct from every other. */
    static SimpleRequest request(int seq) {
        String digits = Integer.toString(100_000_000 + seq).substring(1);
        return SimpleRequest.newBuilder().setRequestMessage(PREFIX + digits).build();
    }
}
