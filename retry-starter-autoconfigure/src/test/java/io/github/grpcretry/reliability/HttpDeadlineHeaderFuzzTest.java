package io.github.grpcretry.reliability;

import static io.github.grpcretry.testing.ScriptedServer.Action;
import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;

import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.reliability.Fixtures.Client;
import io.github.grpcretry.spring.web.GrpcDeadlineHttpFilter;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.SimpleCalls;
import io.grpc.CallOptions;
import io.grpc.ClientInterceptors;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Hostile values of the HTTP deadline header ({@code grpc.retry.deadline.http.header}) through
 * {@link GrpcDeadlineHttpFilter} and a Spring MVC handler that makes a gRPC call (interceptor
 * engine, in-process server). Each value is checked against an independent reading of the rule:
 * a whole, non-negative number of milliseconds in ASCII digits (optionally signed, surrounded by
 * blanks) becomes the call's deadline, clamped to {@code http.max}; anything else (junk, negative,
 * overflowing, other scripts' digits) is ignored. The request never fails: the handler always gets
 * a gRPC status, and the server sees exactly the deadline the rule gives.
 */
class HttpDeadlineHeaderFuzzTest {

    static final int CASES = Integer.getInteger("fuzz.http.cases", 2000);
    static final String HEADER = "X-Request-Timeout-Ms";
    static final long MAX_MS = 5000;

    @RestController
    static class CallingController {
        private final io.grpc.Channel channel;

        CallingController(io.grpc.Channel channel) {
            this.channel = channel;
        }

        @GetMapping("/call")
        String call(@RequestParam("id") String id) {
            Metadata headers = new Metadata();
            headers.put(SimpleCalls.CALL_ID, id);
            try {
                ClientCalls.blockingUnaryCall(ClientInterceptors.intercept(channel,
                        MetadataUtils.newAttachHeadersInterceptor(headers)), SimpleCalls.UNARY, CallOptions.DEFAULT,
                        SimpleCalls.request(id));
                return "OK";
            } catch (StatusRuntimeException e) {
                return e.getStatus().getCode().name();
            }
        }
    }

    /** The rule, read independently: the deadline in ms, or -1 when the value is ignored. */
    static long reference(String value) {
        if (value == null) {
            return -1;
        }
        String t = value.trim();
        if (!t.matches("[+-]?[0-9]+")) {
            return -1;
        }
        BigInteger b = new BigInteger(t);
        if (b.signum() < 0 || b.bitLength() > 63) {
            return -1;
        }
        return Math.min(b.longValue(), MAX_MS);
    }

    static String headerValue(Random random) {
        return switch (random.nextInt(12)) {
            case 0 -> Integer.toString(random.nextInt(3000) + 1000);
            case 1 -> Long.toString(MAX_MS + random.nextInt(1_000_000));
            case 2 -> "-" + random.nextInt(1000);
            case 3 -> pick(random, "", " ", "abc", "1e3", "0x10", "5ms", "1.5", "1,000", "1_000", "NaN", "null", "--1",
                    "+", "-", "Infinity", "PT1S", "\t", "5\u0000", "2000;q=1");
            case 4 -> pick(random, "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                    "99999999999999999999999999", "18446744073709551616");
            case 5 -> pick(random, "\u0661\u0662\u0663\u0664", "\u0968\u0966\u0966\u0966", "\uff11\uff10\uff10\uff10",
                    "\u00b2\u00b3", "\u0031\u0030\u0030\u0030"); // Arabic-Indic, Devanagari, fullwidth, superscripts, ASCII
            case 6 -> " " + (1000 + random.nextInt(2000)) + " ";
            case 7 -> "+" + (1000 + random.nextInt(2000));
            case 8 -> "0".repeat(random.nextInt(500)) + (1000 + random.nextInt(2000));
            case 9 -> pick(random, "0", "-0", "+0", "1", "2");
            case 10 -> "x".repeat(random.nextInt(8000));
            default -> {
                StringBuilder sb = new StringBuilder();
                int n = 1 + random.nextInt(8);
                for (int i = 0; i < n; i++) {
                    sb.append("0123456789 +-.eE\t".charAt(random.nextInt(17)));
                }
                yield sb.toString();
            }
        };
    }

    private static String pick(Random random, String... values) {
        return values[random.nextInt(values.length)];
    }

    @Test
    void everyHeaderGivesRuleDeadlineOrNoneAndNeverFailsRequest() throws Exception {
        ScriptedServer server = ScriptedServer.start("http-fuzz-" + System.nanoTime());
        server.script(a -> a.index % 7 == 0 ? Action.ok().delay(2) : Action.ok());
        RetryScheduler scheduler = RetryScheduler.create(1, "http-fuzz");
        Client client = Fixtures.inProcess(server.inProcessName(), Fixtures.channelConfig("http",
                Fixtures.service(Fixtures.policy(3, 5, 50, null, Status.Code.UNAVAILABLE), null)), scheduler);
        GrpcDeadlineHttpFilter filter = new GrpcDeadlineHttpFilter(HEADER, Duration.ofMillis(MAX_MS));
        MockMvc mvc = MockMvcBuilders.standaloneSetup(new CallingController(client.channel())).addFilters(filter).build();
        Random random = new Random(31337);
        Map<String, Integer> outcomes = new TreeMap<>();
        List<String> failures = new ArrayList<>();
        try {
            for (int i = 0; i < CASES && failures.size() < 20; i++) {
                String id = "h" + i;
                String value = headerValue(random);
                String second = random.nextInt(10) == 0 ? headerValue(random) : null;
                MockHttpServletResponse response;
                try {
                    var request = get("/call").param("id", id);
                    request = second == null ? request.header(HEADER, value) : request.header(HEADER, value, second);
                    response = mvc.perform(request).andReturn().getResponse();
                } catch (Exception e) {
                    failures.add(id + " header " + show(value) + ": the request failed with " + e);
                    continue;
                }
                if (response.getStatus() != 200) {
                    failures.add(id + " header " + show(value) + ": HTTP " + response.getStatus());
                    continue;
                }
                String code = response.getContentAsString();
                long want = reference(value);
                ScriptedServer.Arrival arrival = null;
                for (ScriptedServer.Arrival a : server.arrivals()) {
                    if (id.equals(a.header("x-call-id"))) {
                        arrival = a;
                    }
                }
                String kind;
                if (want < 0) {
                    kind = "ignored";
                    if (!code.equals("OK") || arrival == null || arrival.deadlineRemainingNanos != null) {
                        failures.add(id + " header " + show(value) + " must be ignored: call " + code + ", server deadline "
                                + (arrival == null ? "(no arrival)" : arrival.deadlineRemainingNanos));
                    }
                } else if (want == 0) {
                    kind = "0 ms";
                    if (!code.equals("DEADLINE_EXCEEDED")) {
                        failures.add(id + " header " + show(value) + " (0 ms): call " + code);
                    }
                } else if (want < 1000) {
                    kind = "under 1 s";
                    if (!code.equals("OK") && !code.equals("DEADLINE_EXCEEDED")) {
                        failures.add(id + " header " + show(value) + ": call " + code);
                    }
                } else {
                    kind = want == MAX_MS ? "clamped to max" : "1 s .. max";
                    long seenMs = arrival == null || arrival.deadlineRemainingNanos == null ? -1
                            : TimeUnit.NANOSECONDS.toMillis(arrival.deadlineRemainingNanos);
                    if (!code.equals("OK") || seenMs > want || seenMs < want - 1000) {
                        failures.add(id + " header " + show(value) + " wants " + want + " ms: call " + code
                                + ", server saw " + seenMs + " ms left");
                    }
                }
                outcomes.merge(kind + " -> " + code, 1, Integer::sum);
                if (i % 500 == 499) {
                    server.reset();
                }
            }
        } finally {
            filter.destroy();
            client.close();
            server.close();
            scheduler.close();
        }
        Figures.record("fuzz-http", CASES + " HTTP deadline header values through the filter and an MVC handler making "
                + "a gRPC call: " + outcomes + "; failures " + failures.size());
        assertThat(failures).isEmpty();
    }

    private static String show(String v) {
        String s = v.length() > 40 ? v.substring(0, 40) + "...(" + v.length() + " chars)" : v;
        StringBuilder sb = new StringBuilder("'");
        for (char c : s.toCharArray()) {
            sb.append(c < 0x20 || c > 0x7e ? String.format("\\u%04x", (int) c) : String.valueOf(c));
        }
        return sb.append("'").toString();
    }
}
