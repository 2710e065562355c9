package io.github.grpcretry.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.internal.config.ServiceConfigJson;
import io.github.grpcretry.reliability.Fixtures.Client;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.SimpleCalls;
import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * Hostile service-config JSON: thousands of seeded mutations of valid documents (text mutations and
 * tree mutations with hostile values: huge, negative, fractional, non-numeric, deep nesting, wrong
 * types). Each must either be read into a service config or be refused with an
 * {@link InvalidRetryConfigurationException} naming the file and JSON path; nothing else may escape,
 * nothing may hang. Every accepted config that has a retry policy then runs a failing call through
 * the interceptor engine and is handed to grpc-java (native engine): both must work with it.
 */
class ServiceConfigJsonFuzzTest {

    static final int CASES = Integer.getInteger("fuzz.json.cases", 5000);
    static final int ENGINE_CHECKS = 300;

    private static final List<String> SEEDS = List.of(
            """
            {"methodConfig": [{"name": [{"service": "grpc.testing.SimpleService"}],
              "retryPolicy": {"maxAttempts": 3, "initialBackoff": "0.001s", "maxBackoff": "0.01s",
                "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}],
             "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}}""",
            """
            {"methodConfig": [{"name": [{"service": "grpc.testing.SimpleService", "method": "UnaryRpc"}],
              "waitForReady": false, "timeout": "5s", "maxRequestMessageBytes": 1048576,
              "retryPolicy": {"maxAttempts": "4", "initialBackoff": "0.002s", "maxBackoff": "0.02s",
                "backoffMultiplier": 1.5, "retryableStatusCodes": [14, "RESOURCE_EXHAUSTED"],
                "perAttemptRecvTimeout": "1s"}},
              {"name": [{}], "hedgingPolicy": {"maxAttempts": 3, "hedgingDelay": "0.1s",
                "nonFatalStatusCodes": ["unavailable"]}}]}""",
            """
            {"loadBalancingConfig": [{"round_robin": {}}], "methodConfig": [
              {"name": [{"service": "grpc.testing.SimpleService"}], "timeout": "1.5s"}]}""");

    private static final String[] HOSTILE_STRINGS = {"", " ", "1.5s", "-1s", "0s", "0.000000001s", "999999999999s",
            "999999999999.999999999s", "9223372036.854775807s", "9223372037s", "315576000001s", "1e3s", "1s ", "PT1S",
            "NaN", "Infinity", "-Infinity", "\u0000", "\uFFFF", "\uD800", "UNAVAILABLE", "unavailable", "OK", "14", "-1",
            "99", "2147483648", "1e400", "0x10", "1_000", "null", "true", "{}", "[]", "\"", "\\", "s", ".5s", "5.s",
            "1.0000000001s", "x".repeat(10_000)};

    private static final String[] HOSTILE_NUMBERS = {"0", "-0", "-1", "1", "2", "5", "1000", "1000.0001", "0.0001",
            "0.001", "0.0005", "2147483647", "2147483648", "-2147483649", "9223372036854775807", "9223372036854775808",
            "1e308", "1e309", "-1e309", "1e-400", "1E+999999999", "0.5", "2.5", "3.0", "3.0000000000000000001",
            "123456789012345678901234567890"};

    @Test
    void everyMutationIsReadOrRefusedWithAReport() throws Exception {
        Random random = new Random(1234);
        ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "json-fuzz");
            t.setDaemon(true);
            return t;
        });
        Map<String, Integer> outcomes = new TreeMap<>();
        List<String> failures = new ArrayList<>();
        List<ServiceConfig> withRetry = new ArrayList<>();
        try {
            for (int i = 0; i < CASES; i++) {
                String json = mutate(random, SEEDS.get(random.nextInt(SEEDS.size())));
                Future<Object> f = worker.submit(() -> {
                    try {
                        return ServiceConfigJson.read(json, "fuzz.json");
                    } catch (Throwable t) {
                        return t;
                    }
                });
                Object result;
                try {
                    result = f.get(5, TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    failures.add("case " + i + " hung: " + abbreviate(json));
                    f.cancel(true);
                    worker.shutdownNow();
                    worker = Executors.newSingleThreadExecutor();
                    continue;
                }
                if (result instanceof ServiceConfig sc) {
                    outcomes.merge("read", 1, Integer::sum);
                    String broken = invariants(sc);
                    if (broken != null) {
                        failures.add("case " + i + " read a config breaking " + broken + ": " + abbreviate(json));
                    }
                    if (hasRetry(sc) && withRetry.size() < ENGINE_CHECKS) {
                        withRetry.add(sc);
                    }
                } else if (result instanceof InvalidRetryConfigurationException e) {
                    outcomes.merge("refused", 1, Integer::sum);
                    for (ConfigProblem p : e.getProblems()) {
                        if (!p.path().startsWith("fuzz.json $") || p.rule() == null || p.rule().isBlank()) {
                            failures.add("case " + i + " problem without a JSON path or rule: " + p.describe());
                        }
                    }
                } else {
                    Throwable t = (Throwable) result;
                    failures.add("case " + i + " threw " + t + ": " + abbreviate(json));
                }
            }
        } finally {
            worker.shutdownNow();
        }
        int engineRuns = runThroughBothEngines(withRetry, failures);
        Figures.record("fuzz-json", CASES + " mutated service-config JSON documents: " + outcomes + ", "
                + engineRuns + " accepted configs run through both engines; failures " + failures.size());
        assertThat(failures).as("cases that escaped with something else than a report").isEmpty();
        assertThat(outcomes.get("read")).isPositive();
        assertThat(outcomes.get("refused")).isPositive();
    }

    // ------------------------------------------------------------------ deep nesting and huge input

    @Test
    void deepNestingAndHugeDocumentsAreRefusedNotCrashing() {
        String deepArray = "{\"methodConfig\": " + "[".repeat(200_000) + "]".repeat(200_000) + "}";
        String deepObject = "{\"methodConfig\": [" + "{\"a\":".repeat(100_000) + "1" + "}".repeat(100_000) + "]}";
        String unclosed = "{\"methodConfig\": " + "[".repeat(200_000);
        StringBuilder many = new StringBuilder("{\"methodConfig\": [");
        for (int i = 0; i < 20_000; i++) {
            many.append(i == 0 ? "" : ",").append("{\"name\": [{\"service\": \"s").append(i).append("\"}], \"timeout\": \"1s\"}");
        }
        many.append("]}");
        for (String json : List.of(deepArray, deepObject, unclosed, many.toString())) {
            try {
                ServiceConfig sc = ServiceConfigJson.read(json, "deep.json");
                assertThat(sc.methodConfigs()).hasSizeLessThanOrEqualTo(20_000);
            } catch (InvalidRetryConfigurationException e) {
                assertThat(e.getProblems()).isNotEmpty();
                assertThat(e.getProblems().get(0).path()).startsWith("deep.json $");
            }
        }
    }

    // ------------------------------------------------------------------ boundaries

    /**
     * The longest duration accepted in each field, and the first one refused; a huge token ratio. What
     * is accepted must work in both engines (no overflow when the engine turns it into nanoseconds,
     * grpc-java takes the rendered map); what is refused names the field.
     */
    @Test
    void longestDurationsAndHugeRatiosAreEitherRefusedOrUsable() throws Exception {
        List<String> failures = new ArrayList<>();
        List<ServiceConfig> accepted = new ArrayList<>();
        String[] fields = {"initialBackoff", "maxBackoff", "perAttemptRecvTimeout", "timeout", "hedgingDelay"};
        for (String field : fields) {
            for (String value : List.of("9223372036.854775807s", "9223372036.854775808s", "999999999999s")) {
                JsonObject root = JsonParser.parseString(SEEDS.get(0)).getAsJsonObject();
                JsonObject mc = root.getAsJsonArray("methodConfig").get(0).getAsJsonObject();
                switch (field) {
                    case "timeout" -> mc.addProperty("timeout", value);
                    case "hedgingDelay" -> {
                        mc.remove("retryPolicy");
                        JsonObject h = new JsonObject();
                        h.addProperty("maxAttempts", 3);
                        h.addProperty("hedgingDelay", value);
                        mc.add("hedgingPolicy", h);
                    }
                    default -> mc.getAsJsonObject("retryPolicy").addProperty(field, value);
                }
                boolean fits = value.startsWith("9223372036.854775807");
                try {
                    ServiceConfig sc = ServiceConfigJson.read(root.toString(), "edge.json");
                    if (!fits) {
                        failures.add(field + "=" + value + " was accepted");
                    }
                    accepted.add(sc);
                } catch (InvalidRetryConfigurationException e) {
                    if (fits) {
                        failures.add(field + "=" + value + " was refused: " + e.getMessage());
                    } else if (!e.getProblems().get(0).path().endsWith("." + field)) {
                        failures.add(field + "=" + value + " named " + e.getProblems().get(0).path());
                    }
                }
            }
        }
        ServiceConfig hugeRatio = ServiceConfigJson.read(SEEDS.get(0).replace("\"tokenRatio\": 0.1",
                "\"tokenRatio\": 1e300"), "ratio.json");
        io.github.grpcretry.throttle.RetryThrottle throttle =
                new io.github.grpcretry.throttle.RetryThrottle(hugeRatio.retryThrottling());
        throttle.onQualifiedFailureThenCheckAllowed();
        throttle.onSuccess();
        assertThat(throttle.tokens()).as("a huge ratio refills the bucket, no more").isEqualTo(10.0);
        accepted.add(hugeRatio);
        runThroughBothEngines(accepted, failures);
        assertThat(failures).isEmpty();
    }

    // ------------------------------------------------------------------ accepted configs in both engines

    private static int runThroughBothEngines(List<ServiceConfig> configs, List<String> failures) throws Exception {
        ScriptedServer server = ScriptedServer.start("json-fuzz-" + System.nanoTime());
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        // grpc-java's own retry over Netty: in this JVM the in-process transport reports message sizes (surefire
        // sets GRPC_EXPERIMENTAL_SUPPORT_TRACING_MESSAGE_SIZES), and grpc-java's retry then deadlocks now and then
        // in-process (its stream's write, holding the in-process stream's lock, waits in RetriableStream's size
        // tracer for the retry's lock, which a transport thread holds while it waits for that stream's lock)
        ScriptedServer nettyServer = ScriptedServer.startNetty();
        nettyServer.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        RetryScheduler scheduler = RetryScheduler.create(1, "json-fuzz");
        int runs = 0;
        try {
            for (ServiceConfig sc : configs) {
                runs++;
                // the interceptor engine: a failing call ends with a status within its deadline
                try (Client c = Fixtures.inProcess(server.inProcessName(), Fixtures.channelConfig("fuzz", sc), scheduler)) {
                    SimpleCalls.Handle h = SimpleCalls.run(c.channel(), SimpleCalls.UNARY,
                            CallOptions.DEFAULT.withDeadlineAfter(300, TimeUnit.MILLISECONDS), "j" + runs, List.of("x"));
                    if (!h.listener.tryAwaitClose(5, TimeUnit.SECONDS)) {
                        failures.add("interceptor engine hung with " + sc);
                    } else if (!h.listener.contractProblems().isEmpty()) {
                        failures.add("contract " + h.listener.contractProblems() + " with " + sc);
                    }
                } catch (RuntimeException e) {
                    failures.add("interceptor engine threw " + e + " with " + sc);
                }
                // the native engine: grpc-java must take the rendered map
                ManagedChannel ch = null;
                try {
                    ch = Grpc.newChannelBuilder(nettyServer.target(), InsecureChannelCredentials.create())
                            .defaultServiceConfig(sc.toServiceConfigMap(true)).enableRetry().build();
                    SimpleCalls.Handle h = SimpleCalls.run(ch, SimpleCalls.UNARY,
                            CallOptions.DEFAULT.withDeadlineAfter(300, TimeUnit.MILLISECONDS), "n" + runs, List.of("x"));
                    if (!h.listener.tryAwaitClose(5, TimeUnit.SECONDS)) {
                        failures.add("native engine hung with " + sc);
                    }
                } catch (RuntimeException e) {
                    failures.add("grpc-java refused the rendered config (" + e + "): " + sc);
                } finally {
                    if (ch != null) {
                        ch.shutdownNow();
                    }
                }
            }
        } finally {
            server.close();
            nettyServer.close();
            scheduler.close();
        }
        return runs;
    }

    // ------------------------------------------------------------------ invariants of an accepted config

    private static boolean hasRetry(ServiceConfig sc) {
        for (MethodConfig mc : sc.methodConfigs()) {
            if (mc.retryPolicy() != null) {
                return true;
            }
        }
        return false;
    }

    /** The first A6 rule an accepted config breaks, or null. */
    private static String invariants(ServiceConfig sc) {
        for (MethodConfig mc : sc.methodConfigs()) {
            if (mc.names().isEmpty()) {
                return "a name";
            }
            if (mc.retryPolicy() != null && mc.hedgingPolicy() != null) {
                return "retry xor hedging";
            }
            if (mc.timeout() != null && (mc.timeout().isNegative() || mc.timeout().isZero())) {
                return "timeout > 0";
            }
            RetryPolicy r = mc.retryPolicy();
            if (r != null) {
                if (r.maxAttempts() < 2) {
                    return "maxAttempts >= 2";
                }
                if (r.initialBackoff().isNegative() || r.initialBackoff().isZero()
                        || r.maxBackoff().isNegative() || r.maxBackoff().isZero()) {
                    return "backoffs > 0";
                }
                if (!(r.backoffMultiplier() > 0) || Double.isInfinite(r.backoffMultiplier())) {
                    return "multiplier > 0";
                }
                if (r.retryableStatusCodes().isEmpty() || r.retryableStatusCodes().contains(Status.Code.OK)) {
                    return "retryable codes";
                }
            }
            if (mc.hedgingPolicy() != null && (mc.hedgingPolicy().maxAttempts() < 2
                    || mc.hedgingPolicy().hedgingDelay().isNegative()
                    || mc.hedgingPolicy().nonFatalStatusCodes().contains(Status.Code.OK))) {
                return "hedging policy";
            }
        }
        if (sc.retryThrottling() != null) {
            double max = sc.retryThrottling().maxTokens();
            if (!(max > 0) || max > 1000 || sc.retryThrottling().tokenRatioMilli() < 1) {
                return "throttling ranges";
            }
        }
        return null;
    }

    // ------------------------------------------------------------------ mutations

    static String mutate(Random random, String seed) {
        int kind = random.nextInt(10);
        if (kind < 6) {
            JsonElement tree = JsonParser.parseString(seed);
            int n = 1 + random.nextInt(3);
            for (int i = 0; i < n; i++) {
                mutateTree(random, tree);
            }
            return tree.toString();
        }
        StringBuilder s = new StringBuilder(seed);
        int n = 1 + random.nextInt(4);
        for (int i = 0; i < n && s.length() > 0; i++) {
            int pos = random.nextInt(s.length());
            switch (random.nextInt(6)) {
                case 0 -> s.setCharAt(pos, (char) random.nextInt(128));
                case 1 -> s.insert(pos, "{}[]\",:-.0123456789eE\\ntfu\u0000\u00e9".charAt(random.nextInt(27)));
                case 2 -> s.delete(pos, Math.min(s.length(), pos + 1 + random.nextInt(8)));
                case 3 -> s.setLength(pos);
                case 4 -> s.insert(pos, s.substring(pos, Math.min(s.length(), pos + random.nextInt(40))));
                default -> s.setCharAt(pos, (char) (0x80 + random.nextInt(0xff00)));
            }
        }
        return s.toString();
    }

    private static void mutateTree(Random random, JsonElement root) {
        List<JsonElement> containers = new ArrayList<>();
        collect(root, containers);
        JsonElement target = containers.get(random.nextInt(containers.size()));
        if (target.isJsonObject()) {
            JsonObject o = target.getAsJsonObject();
            List<String> keys = new ArrayList<>(o.keySet());
            int action = random.nextInt(5);
            if (keys.isEmpty() || action == 0) {
                String[] known = {"maxAttempts", "initialBackoff", "maxBackoff", "backoffMultiplier",
                        "retryableStatusCodes", "perAttemptRecvTimeout", "hedgingDelay", "nonFatalStatusCodes",
                        "timeout", "name", "service", "method", "retryPolicy", "hedgingPolicy", "methodConfig",
                        "retryThrottling", "maxTokens", "tokenRatio", "waitForReady", "maxRequestMessageBytes"};
                o.add(known[random.nextInt(known.length)], hostile(random, 0));
            } else if (action == 1) {
                o.remove(keys.get(random.nextInt(keys.size())));
            } else {
                o.add(keys.get(random.nextInt(keys.size())), hostile(random, 0));
            }
        } else {
            JsonArray a = target.getAsJsonArray();
            int action = random.nextInt(4);
            if (a.isEmpty() || action == 0) {
                a.add(hostile(random, 0));
            } else if (action == 1) {
                a.remove(random.nextInt(a.size()));
            } else if (action == 2) {
                a.add(a.get(random.nextInt(a.size())).deepCopy()); // duplicates (names, codes)
            } else {
                a.set(random.nextInt(a.size()), hostile(random, 0));
            }
        }
    }

    private static void collect(JsonElement e, List<JsonElement> out) {
        if (e.isJsonObject()) {
            out.add(e);
            for (Map.Entry<String, JsonElement> en : e.getAsJsonObject().entrySet()) {
                collect(en.getValue(), out);
            }
        } else if (e.isJsonArray()) {
            out.add(e);
            for (JsonElement c : e.getAsJsonArray()) {
                collect(c, out);
            }
        }
    }

    private static JsonElement hostile(Random random, int depth) {
        switch (random.nextInt(depth > 2 ? 3 : 6)) {
            case 0:
                return new JsonPrimitive(HOSTILE_STRINGS[random.nextInt(HOSTILE_STRINGS.length)]);
            case 1:
                return new JsonPrimitive(new BigDecimal(HOSTILE_NUMBERS[random.nextInt(HOSTILE_NUMBERS.length)]
                        .replace("1e", "1E")));
            case 2:
                return random.nextBoolean() ? JsonNull.INSTANCE : new JsonPrimitive(random.nextBoolean());
            case 3: {
                JsonArray a = new JsonArray();
                int n = random.nextInt(4);
                for (int i = 0; i < n; i++) {
                    a.add(hostile(random, depth + 1));
                }
                return a;
            }
            case 4: {
                JsonObject o = new JsonObject();
                o.add("service", hostile(random, depth + 1));
                if (random.nextBoolean()) {
                    o.add("method", hostile(random, depth + 1));
                }
                return o;
            }
            default:
                return new JsonPrimitive(Integer.toString(random.nextInt(40) - 5));
        }
    }

    private static String abbreviate(String s) {
        String one = s.replace('\n', ' ');
        return one.length() > 300 ? one.substring(0, 300) + "..." : one;
    }
}
