package io.github.grpcretry.testing;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptors;
import io.grpc.EquivalentAddressGroup;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.NameResolver;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Backends behind one name: {@code n} {@link ScriptedServer}s on Netty on 127.0.0.1 (ephemeral ports) and a name
 * resolver, registered in grpc-java's default registry for a scheme of its own while open, that answers with their
 * addresses (and no service config: the channel's default one applies). {@link #run} makes calls from concurrent
 * callers, each call tagged with an id, and {@link Outcome} reads from the servers' records where each call's
 * attempts went.
 */
public final class Backends extends AnsweringResolverProvider {

    private final List<ScriptedServer> servers = new CopyOnWriteArrayList<>();
    private final List<Integer> ports = new CopyOnWriteArrayList<>();
    private volatile List<Integer> resolved;

    private Backends(int n) throws IOException {
        super("backends" + Long.toHexString(System.nanoTime()));
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            servers.add(ScriptedServer.startNetty());
            ports.add(servers.get(i).port());
            all.add(i);
        }
        this.resolved = List.copyOf(all);
        register();
    }

    /** {@code n} backends, all resolved. */
    public static Backends start(int n) throws IOException {
        return new Backends(n);
    }

    public ScriptedServer server(int i) {
        return servers.get(i);
    }

    public int size() {
        return servers.size();
    }

    /** Adds a backend (not resolved until {@link #resolve} names it); returns its index. */
    public int add() throws IOException {
        servers.add(ScriptedServer.startNetty());
        ports.add(servers.get(servers.size() - 1).port());
        return servers.size() - 1;
    }

    /** Every started resolver answers with the backends {@code indexes}; returns once each channel took it. */
    public void resolve(Integer... indexes) throws InterruptedException {
        resolved = List.of(indexes);
        answerAgain();
    }

    /**
     * Unary calls on {@code channel} until each of the first {@code n} backends has taken one (round_robin has them
     * all ready; a failing backend's answer counts), then every server's record is cleared.
     */
    public void warmUp(Channel channel, int n) {
        for (int i = 0; i < 200 && !reached(n); i++) {
            try {
                ClientCalls.blockingUnaryCall(channel, SimpleCalls.UNARY,
                        CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), SimpleCalls.request("warm" + i));
            } catch (StatusRuntimeException e) {
                // a failing backend's answer: it was reached
            }
        }
        if (!reached(n)) {
            throw new AssertionError("not every backend was reached in 200 calls");
        }
        for (ScriptedServer s : servers) {
            s.reset();
        }
    }

    private boolean reached(int n) {
        for (int i = 0; i < n; i++) {
            if (servers.get(i).arrivalCount() == 0) {
                return false;
            }
        }
        return true;
    }

    /** Which backend each arrival reached, by call id, in the order of the attempts. */
    public Map<String, List<Integer>> attemptsByCall() {
        Map<String, Map<Integer, Integer>> byCall = new HashMap<>();
        for (int b = 0; b < servers.size(); b++) {
            for (ScriptedServer.Arrival a : servers.get(b).arrivals()) {
                String call = a.header(SimpleCalls.CALL_ID.name());
                if (call == null) {
                    continue;
                }
                int attempt = a.previousAttempts == null ? 0 : a.previousAttempts;
                byCall.computeIfAbsent(call, k -> new HashMap<>()).put(attempt, b);
            }
        }
        Map<String, List<Integer>> out = new HashMap<>();
        byCall.forEach((call, attempts) -> {
            List<Integer> ordered = new ArrayList<>();
            for (int i = 0; attempts.containsKey(i); i++) {
                ordered.add(attempts.get(i));
            }
            out.put(call, ordered);
        });
        return out;
    }

    /**
     * {@code callers} threads make {@code calls} unary calls each on {@code channel}, waiting on a latch to start
     * together, each call tagged with the id {@code prefix-caller-i}; {@code during} runs on the test thread once
     * {@code duringAfter} calls have ended (or never: negative). Returns the failed calls.
     */
    public static Outcome run(Channel channel, String prefix, int callers, int calls, int duringAfter, Runnable during)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(callers);
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger ended = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch reached = new CountDownLatch(duringAfter < 0 ? 0 : 1);
        List<String> failures = new CopyOnWriteArrayList<>();
        try {
            List<Future<?>> all = new ArrayList<>();
            for (int c = 0; c < callers; c++) {
                int caller = c;
                all.add(pool.submit(() -> {
                    go.await();
                    for (int i = 0; i < calls; i++) {
                        String id = prefix + "-" + caller + "-" + i;
                        try {
                            ClientCalls.blockingUnaryCall(tagged(channel, id), SimpleCalls.UNARY,
                                    CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS), SimpleCalls.request(id));
                        } catch (StatusRuntimeException e) {
                            failed.incrementAndGet();
                            failures.add(id + ": " + e.getStatus());
                        }
                        if (ended.incrementAndGet() == duringAfter) {
                            reached.countDown();
                        }
                    }
                    return null;
                }));
            }
            go.countDown();
            if (duringAfter >= 0) {
                if (!reached.await(60, TimeUnit.SECONDS)) {
                    throw new AssertionError("the calls did not reach " + duringAfter);
                }
                during.run();
            }
            for (Future<?> f : all) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        return new Outcome(failed.get(), List.copyOf(failures));
    }

    /** How many attempts after the first went to a backend an earlier attempt of the same call reached. */
    public static int sentToTried(Map<String, List<Integer>> attemptsByCall) {
        int n = 0;
        for (List<Integer> backends : attemptsByCall.values()) {
            Set<Integer> tried = new HashSet<>();
            for (int b : backends) {
                if (!tried.add(b)) {
                    n++;
                }
            }
        }
        return n;
    }

    /** Attempts after the first, over all calls. */
    public static int later(Map<String, List<Integer>> attemptsByCall) {
        return attemptsByCall.values().stream().mapToInt(l -> Math.max(0, l.size() - 1)).sum();
    }

    /** The failed calls of a run. */
    public record Outcome(int failedCalls, List<String> failures) {
    }

    private static Channel tagged(Channel channel, String id) {
        return ClientInterceptors.intercept(channel, new io.grpc.ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                    CallOptions callOptions, Channel next) {
                return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
                    @Override
                    public void start(Listener<RespT> listener, Metadata headers) {
                        headers.put(SimpleCalls.CALL_ID, id);
                        super.start(listener, headers);
                    }
                };
            }
        });
    }

    @Override
    protected NameResolver.ResolutionResult answer(NameResolver.Args args) {
        List<EquivalentAddressGroup> addresses = new ArrayList<>();
        for (int i : resolved) {
            addresses.add(new EquivalentAddressGroup(new InetSocketAddress("127.0.0.1", ports.get(i))));
        }
        return NameResolver.ResolutionResult.newBuilder().setAddresses(addresses).build();
    }

    @Override
    public void close() {
        super.close();
        for (ScriptedServer s : servers) {
            s.close();
        }
    }
}
