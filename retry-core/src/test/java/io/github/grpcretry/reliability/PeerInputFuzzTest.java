package io.github.grpcretry.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.EngineTestAccess;
import io.github.grpcretry.attempt.GrpcRetryCallOptions;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.internal.pushback.Pushback;
import io.github.grpcretry.reliability.Fixtures.Client;
import io.github.grpcretry.testing.SimpleCalls;
import io.grpc.CallOptions;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Hostile bytes from the peer, through the interceptor engine: fuzzed {@code grpc-retry-pushback-ms}
 * trailers (junk, huge, negative, repeated, empty, long) and a {@code grpc-previous-rpc-attempts}
 * echoed back by the server in headers and trailers. The pushback parser is checked against an
 * independent reference; every call ends with a gRPC status (never an exception, never a hang), in
 * the number of attempts the reference pushback allows, and every retry carries the engine's own
 * {@code grpc-previous-rpc-attempts}, whatever the peer sent.
 */
class PeerInputFuzzTest {

    static final int CASES = Integer.getInteger("fuzz.peer.cases", 3000);
    /** The deadline of every fuzzed call: a pushback at least this long cannot be waited for. */
    static final long DEADLINE_MS = 2000;
    static final Metadata.Key<String> CASE = Metadata.Key.of("x-case", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> PREVIOUS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);

    /** What the server answers for one case; the arrivals record the previous-attempts values it saw. */
    record Case(List<String> pushback, List<String> echo, boolean headersWithEcho, int okOnAttempt,
            List<List<String>> arrivals) {
    }

    private final Map<String, Case> cases = new ConcurrentHashMap<>();
    private RetryScheduler scheduler;
    private Server inProcess;
    private Server netty;

    @BeforeEach
    void setUp() throws Exception {
        scheduler = RetryScheduler.create(2, "peer-fuzz");
        ServerServiceDefinition service = ServerServiceDefinition.builder("grpc.testing.SimpleService")
                .addMethod(SimpleCalls.UNARY, handler()).build();
        inProcess = InProcessServerBuilder.forName("peer-fuzz").addService(service).build().start();
        netty = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(service).build().start();
    }

    @AfterEach
    void tearDown() throws Exception {
        Fixtures.waitFor("no timer outstanding", 5000, () -> EngineTestAccess.outstandingTimers(scheduler) == 0);
        inProcess.shutdownNow();
        netty.shutdownNow();
        scheduler.close();
    }

    private ServerCallHandler<SimpleRequest, SimpleResponse> handler() {
        return (call, headers) -> {
            Case c = cases.get(headers.get(CASE));
            Iterable<String> prev = headers.getAll(PREVIOUS);
            List<String> seen = new ArrayList<>();
            if (prev != null) {
                prev.forEach(seen::add);
            }
            c.arrivals.add(seen);
            int attempt = c.arrivals.size();
            call.request(1);
            return new ServerCall.Listener<>() {
                @Override
                public void onHalfClose() {
                    try {
                        if (c.headersWithEcho) {
                            Metadata h = new Metadata();
                            c.echo.forEach(v -> h.put(PREVIOUS, v));
                            call.sendHeaders(h);
                        }
                        Metadata trailers = new Metadata();
                        c.echo.forEach(v -> trailers.put(PREVIOUS, v));
                        if (attempt == c.okOnAttempt) {
                            if (!c.headersWithEcho) {
                                call.sendHeaders(new Metadata());
                            }
                            call.sendMessage(SimpleResponse.newBuilder().setResponseMessage("x").build());
                            call.close(Status.OK, trailers);
                        } else {
                            c.pushback.forEach(v -> trailers.put(Pushback.KEY, v));
                            call.close(Status.UNAVAILABLE.withDescription("fuzz"), trailers);
                        }
                    } catch (RuntimeException e) {
                        // a value the transport refuses to send: the call fails, as a status
                        call.close(Status.INTERNAL.withDescription("server could not send: " + e), new Metadata());
                    }
                }
            };
        };
    }

    // ------------------------------------------------------------------ reference pushback

    /** A6 read independently: one value, a 32-bit non-negative decimal integer; anything else stops. */
    static long reference(List<String> values) {
        if (values.isEmpty()) {
            return Pushback.ABSENT;
        }
        if (values.size() > 1) {
            return Pushback.STOP;
        }
        String v = values.get(0);
        if (!v.matches("[+-]?[0-9]+")) {
            return Pushback.STOP;
        }
        BigInteger b = new BigInteger(v);
        if (b.signum() < 0 || b.compareTo(BigInteger.valueOf(Integer.MAX_VALUE)) > 0) {
            return Pushback.STOP;
        }
        return b.longValue();
    }

    static String pushbackValue(Random random) {
        return switch (random.nextInt(14)) {
            case 0 -> Integer.toString(random.nextInt(30));
            case 1 -> "-" + random.nextInt(3000);
            case 2 -> "+" + random.nextInt(20);
            case 3 -> "";
            case 4 -> pick(random, " 5", "5 ", "5ms", "1e3", "0x1F", "--5", "+-5", "-", "+", "5.0", "٣", "5\u0000",
                    "\t7", "abc", "NaN", "null", "1_000");
            case 5 -> pick(random, "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967296",
                    "9223372036854775807", "9223372036854775808", "99999999999999999999999999");
            case 6 -> "0".repeat(random.nextInt(2000)) + random.nextInt(20);
            case 7 -> "9".repeat(4 + random.nextInt(200));
            case 8 -> "-0";
            case 9 -> pick(random, "2000", "5000", "60000", "86400000");
            default -> {
                StringBuilder sb = new StringBuilder();
                int n = 1 + random.nextInt(6);
                for (int i = 0; i < n; i++) {
                    sb.append("0123456789+- .xe\t".charAt(random.nextInt(17)));
                }
                yield sb.toString();
            }
        };
    }

    private static String pick(Random random, String... values) {
        return values[random.nextInt(values.length)];
    }

    /** The value as the client reads it: ASCII metadata turns other characters into '?'. */
    static String asReceived(String v) {
        return new String(v.getBytes(StandardCharsets.US_ASCII), StandardCharsets.US_ASCII);
    }

    @Test
    void pushbackParserAgreesWithTheReference() {
        Random random = new Random(99);
        for (int i = 0; i < 50_000; i++) {
            List<String> values = new ArrayList<>();
            int n = random.nextInt(10) < 8 ? 1 : random.nextInt(4);
            for (int k = 0; k < n; k++) {
                values.add(pushbackValue(random));
            }
            assertThat(Pushback.parse(values)).as("pushback " + values).isEqualTo(reference(values));
        }
    }

    // ------------------------------------------------------------------ through the engine

    @Test
    void fuzzedPushbackAndEchoedAttemptHeadersEndAsTheReferenceSays() throws Exception {
        RetryPolicy policy = Fixtures.policy(3, 1, 2, null, Status.Code.UNAVAILABLE);
        Client client = Fixtures.inProcess("peer-fuzz", Fixtures.channelConfig("peer",
                Fixtures.service(policy, null)), scheduler);
        Random random = new Random(2024);
        Map<String, Integer> outcomes = new TreeMap<>();
        List<String> failures = new ArrayList<>();
        try {
            List<Object[]> running = new ArrayList<>();
            for (int i = 0; i < CASES; i++) {
                String id = "pb" + i;
                List<String> pushback = new ArrayList<>();
                int n = random.nextInt(10) < 8 ? 1 : random.nextInt(4);
                for (int k = 0; k < n; k++) {
                    pushback.add(pushbackValue(random));
                }
                Case c = newCase(random, pushback);
                cases.put(id, c);
                running.add(new Object[] {id, c, start(client, id)}); // all at once: waits overlap
            }
            for (Object[] r : running) {
                check((String) r[0], (Case) r[1], (SimpleCalls.Handle) r[2], client, policy, outcomes, failures);
            }
        } finally {
            client.close();
        }
        assertThat(client.bufferPool().used()).isZero();
        Figures.record("fuzz-peer", CASES + " fuzzed pushback trailers (" + "with echoed grpc-previous-rpc-attempts"
                + ") in-process: " + outcomes + "; failures " + failures.size());
        assertThat(failures).isEmpty();
    }

    private static Case newCase(Random random, List<String> pushback) {
        List<String> echo = new ArrayList<>();
        int e = random.nextInt(4);
        for (int k = 0; k < e; k++) {
            echo.add(pick(random, "0", "1", "7", "-1", "", "99999999999999999999", "junk", "2,3", "٣"));
        }
        // every third case succeeds on a later attempt, when the pushback lets it retry
        int okOn = random.nextInt(3) == 0 ? 2 + random.nextInt(2) : 0;
        return new Case(pushback, echo, random.nextInt(8) == 0, okOn, new CopyOnWriteArrayList<>());
    }

    private static SimpleCalls.Handle start(Client client, String id) {
        Metadata headers = new Metadata();
        headers.put(CASE, id);
        SimpleCalls.Handle h = SimpleCalls.start(client.channel(), SimpleCalls.UNARY,
                CallOptions.DEFAULT.withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS), id, List.of("x"), 0, headers);
        h.send(List.of("x")).halfClose();
        return h;
    }

    private static void check(String id, Case c, SimpleCalls.Handle h, Client client, RetryPolicy policy,
            Map<String, Integer> outcomes, List<String> failures) throws InterruptedException {
        if (!h.listener.tryAwaitClose(DEADLINE_MS + 5000, TimeUnit.MILLISECONDS)) {
            failures.add(id + " hung: " + c);
            return;
        }
        List<String> problems = h.listener.contractProblems(); // includes: an OK call got exactly its response
        if (!problems.isEmpty()) {
            failures.add(id + " contract " + problems);
        }
        List<String> received = c.pushback.stream().map(PeerInputFuzzTest::asReceived).toList();
        long pushback = reference(received);
        int attempts = c.arrivals.size();
        Status.Code code = h.listener.status().getCode();
        String pb = pushback == Pushback.STOP ? "stop" : pushback == Pushback.ABSENT ? "absent"
                : pushback < 40 ? "short delay" : pushback >= DEADLINE_MS ? "delay past the deadline" : "medium delay";
        outcomes.merge("pushback " + pb + (c.headersWithEcho ? " after headers" : "") + " -> " + code, 1, Integer::sum);
        if (c.headersWithEcho) {
            // response headers commit the call: one attempt, its status
            expect(failures, id, attempts == 1 && code == (c.okOnAttempt == 1 ? Status.Code.OK : Status.Code.UNAVAILABLE),
                    "committed by headers: 1 attempt", c, attempts, code);
        } else if (pushback == Pushback.STOP || pushback >= DEADLINE_MS) {
            expect(failures, id, attempts == 1 && code == Status.Code.UNAVAILABLE, "no retry", c, attempts, code);
        } else if (pushback == Pushback.ABSENT || pushback < 40) {
            int want = c.okOnAttempt > 0 ? c.okOnAttempt : policy.maxAttempts();
            Status.Code wantCode = c.okOnAttempt > 0 ? Status.Code.OK : Status.Code.UNAVAILABLE;
            expect(failures, id, attempts == want && code == wantCode, want + " attempts, " + wantCode, c, attempts, code);
        } else {
            expect(failures, id, attempts >= 1 && attempts <= policy.maxAttempts()
                    && (code == Status.Code.OK || code == Status.Code.UNAVAILABLE), "1..3 attempts", c, attempts, code);
        }
        for (int k = 0; k < c.arrivals.size(); k++) {
            List<String> prev = c.arrivals.get(k);
            List<String> want = k == 0 ? List.of() : List.of(Integer.toString(k));
            if (!prev.equals(want)) {
                failures.add(id + " attempt " + (k + 1) + " carried grpc-previous-rpc-attempts " + prev + ", want " + want);
            }
        }
    }

    private static void expect(List<String> failures, String id, boolean ok, String rule, Case c, int attempts,
            Status.Code code) {
        if (!ok) {
            failures.add(id + " expected " + rule + ", got " + attempts + " attempts, " + code + " for " + c.pushback
                    + " (ok on " + c.okOnAttempt + ")");
        }
    }

    /**
     * Over Netty, values HTTP/2 may refuse (control characters, 8 KiB and more): the call still ends
     * with a status within the attempt limit.
     */
    @Test
    void hostileTrailerBytesOverNettyEndWithAStatus() throws Exception {
        RetryPolicy policy = Fixtures.policy(3, 1, 2, null, Status.Code.UNAVAILABLE);
        Client client = Fixtures.netty("127.0.0.1:" + netty.getPort(), Fixtures.channelConfig("peer-netty",
                Fixtures.service(policy, null)), scheduler);
        Random random = new Random(5);
        Map<Status.Code, Integer> codes = new TreeMap<>();
        String[] nasty = {"5\r\n", "\u0000", "5\n6", "x".repeat(9000), "1".repeat(20_000), "\u007f", " ", "ÿ"};
        try {
            for (int i = 0; i < 120; i++) {
                String id = "nt" + i;
                List<String> pushback = new ArrayList<>();
                int n = 1 + random.nextInt(2);
                for (int k = 0; k < n; k++) {
                    pushback.add(random.nextBoolean() ? nasty[random.nextInt(nasty.length)] : pushbackValue(random));
                }
                Case c = newCase(random, pushback);
                cases.put(id, c);
                SimpleCalls.Handle h = start(client, id);
                assertThat(h.listener.tryAwaitClose(DEADLINE_MS + 5000, TimeUnit.MILLISECONDS)).as(id + " closed").isTrue();
                assertThat(h.listener.contractProblems()).as(id).isEmpty();
                assertThat(c.arrivals.size()).as(id + " attempts, ended " + h.listener.status()).isBetween(1, 3);
                codes.merge(h.listener.status().getCode(), 1, Integer::sum);
            }
        } finally {
            client.close();
        }
        Figures.record("fuzz-peer", "120 hostile trailer values over Netty (control characters, up to 20 KB): " + codes);
    }

    // ------------------------------------------------------------------ the application's own header

    /**
     * A proxy that forwards every inbound header passes a {@code grpc-previous-rpc-attempts} of its
     * caller to the engine. Retries must carry the engine's own count (they do); docs/design.md §1 says
     * the first attempt carries none: the engine owns the header and strips the application's value.
     */
    @Test
    void appsAttemptHeaderNeverReachesTheServerOnFirstAttempt() throws Exception {
        Client client = Fixtures.inProcess("peer-fuzz", Fixtures.channelConfig("own",
                Fixtures.service(Fixtures.policy(3, 1, 2, null, Status.Code.UNAVAILABLE), null)), scheduler);
        try {
            cases.put("own", new Case(List.of(), List.of(), false, 3, new CopyOnWriteArrayList<>()));
            Metadata headers = new Metadata();
            headers.put(CASE, "own");
            headers.put(PREVIOUS, "7");
            SimpleCalls.Handle h = SimpleCalls.start(client.channel(), SimpleCalls.UNARY, CallOptions.DEFAULT,
                    "own", List.of("x"), 0, headers).send(List.of("x")).halfClose();
            assertThat(h.listener.awaitClose(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
            assertThat(cases.get("own").arrivals).containsExactly(List.of(), List.of("1"), List.of("2"));
        } finally {
            client.close();
        }
    }

    /** The retries of the same call: the application's value is replaced by the engine's count. */
    @Test
    void applicationSuppliedAttemptHeaderIsReplacedOnRetries() throws Exception {
        Client client = Fixtures.inProcess("peer-fuzz", Fixtures.channelConfig("own",
                Fixtures.service(Fixtures.policy(3, 1, 2, null, Status.Code.UNAVAILABLE), null)), scheduler);
        try {
            cases.put("own2", new Case(List.of(), List.of("9"), false, 3, new CopyOnWriteArrayList<>()));
            Metadata headers = new Metadata();
            headers.put(CASE, "own2");
            headers.put(PREVIOUS, "7");
            headers.put(PREVIOUS, "junk");
            SimpleCalls.Handle h = SimpleCalls.start(client.channel(), SimpleCalls.UNARY, CallOptions.DEFAULT,
                    "own2", List.of("x"), 0, headers).send(List.of("x")).halfClose();
            assertThat(h.listener.awaitClose(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
            List<List<String>> arrivals = cases.get("own2").arrivals;
            assertThat(arrivals).hasSize(3);
            assertThat(arrivals.get(1)).containsExactly("1");
            assertThat(arrivals.get(2)).containsExactly("2");
        } finally {
            client.close();
        }
    }

    // ------------------------------------------------------------------ a per-call policy the validator never saw

    /**
     * A policy given in code per call ({@link GrpcRetryCallOptions#POLICY}) skips the configuration
     * validator. Backoffs too long for nanoseconds once overflowed inside the attempt's listener and
     * left the call open for ever; the engine now saturates them, so the call ends with a status.
     */
    @Test
    void perCallPolicyWithHugeDurationsEndsWithAStatus() throws Exception {
        Client client = Fixtures.inProcess("peer-fuzz", Fixtures.channelConfig("huge",
                Fixtures.service(Fixtures.policy(3, 1, 2, null, Status.Code.UNAVAILABLE), null)), scheduler);
        try {
            RetryPolicy huge = new RetryPolicy(3, Duration.ofSeconds(Long.MAX_VALUE / 2), Duration.ofSeconds(Long.MAX_VALUE),
                    2.0, Set.of(Status.Code.UNAVAILABLE), null);
            cases.put("huge", new Case(List.of(), List.of(), false, 0, new CopyOnWriteArrayList<>()));
            Metadata headers = new Metadata();
            headers.put(CASE, "huge");
            SimpleCalls.Handle h = SimpleCalls.start(client.channel(), SimpleCalls.UNARY,
                    GrpcRetryCallOptions.withPolicy(CallOptions.DEFAULT.withDeadlineAfter(1, TimeUnit.SECONDS), huge),
                    "huge", List.of("x"), 0, headers).send(List.of("x")).halfClose();
            assertThat(h.listener.tryAwaitClose(5, TimeUnit.SECONDS)).as("the call closed").isTrue();
            assertThat(h.listener.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);

            RetryPolicy hugeAttempt = new RetryPolicy(3, Duration.ofMillis(1), Duration.ofMillis(2), 2.0,
                    Set.of(Status.Code.UNAVAILABLE), Duration.ofSeconds(Long.MAX_VALUE));
            cases.put("huge2", new Case(List.of(), List.of(), false, 0, new CopyOnWriteArrayList<>()));
            Metadata headers2 = new Metadata();
            headers2.put(CASE, "huge2");
            SimpleCalls.Handle h2 = SimpleCalls.start(client.channel(), SimpleCalls.UNARY,
                    GrpcRetryCallOptions.withPolicy(CallOptions.DEFAULT, hugeAttempt), "huge2", List.of("x"), 0,
                    headers2).send(List.of("x")).halfClose();
            assertThat(h2.listener.tryAwaitClose(5, TimeUnit.SECONDS)).as("the call closed").isTrue();
        } finally {
            client.close();
        }
    }
}
