package io.github.grpcretry.internal.config;

import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.ServiceConfig;
import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import java.io.IOException;
import java.io.StringReader;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Reads a standard gRPC service config JSON ({@code methodConfig[]} with {@code name},
 * {@code waitForReady}, {@code timeout}, {@code maxRequestMessageBytes},
 * {@code maxResponseMessageBytes}, {@code retryPolicy}, {@code hedgingPolicy}; and
 * {@code retryThrottling}), as grpc-go, grpc-java and Envoy users write it. Keys this starter does
 * not use ({@code healthCheckConfig}, a misspelt {@code retryPolcy}, ...) are ignored, as gRPC ignores unknown
 * fields; a file's load-balancing part is reported ({@link #parseFile}).
 *
 * <p>Durations are protobuf JSON durations ({@code "1.5s"}); integers may be JSON numbers or
 * numeric strings; status codes are names (any case) or numbers. Syntax errors and values of the
 * wrong type are reported as {@link ConfigProblem}s whose path is {@code <source> $.<json path>},
 * e.g. {@code classpath:sc.json $.methodConfig[0].retryPolicy.maxAttempts}. Range rules (A6) are
 * checked later by {@link RetryConfigValidator}.
 */
public final class ServiceConfigJson {

    private static final Pattern DURATION = Pattern.compile("(-)?(\\d{1,12})(?:\\.(\\d{1,9}))?s");
    /** Where the JSON reader stopped, as its messages say it. */
    private static final Pattern POSITION = Pattern.compile("at line (\\d+) column (\\d+)");
    /** The JSON library's advice, which is not the user's (the file is read strictly on purpose). */
    private static final Pattern LIBRARY_ADVICE = Pattern.compile(
            "^Use JsonReader\\.setStrictness\\(Strictness\\.LENIENT\\) to accept (malformed JSON)?\\s*");

    /** The load-balancing keys of a service config, which a service-config file may not hold (see {@link #parseFile}). */
    private static final List<String> LOAD_BALANCING = List.of("loadBalancingConfig", "loadBalancingPolicy");

    private final String source;
    private final List<ConfigProblem> problems;
    private final boolean file;

    private ServiceConfigJson(String source, List<ConfigProblem> problems, boolean file) {
        this.source = source;
        this.problems = problems;
        this.file = file;
    }

    /**
     * Parses a service-config file as {@link #parse(String, String, List)} does, and reports its load-balancing
     * part ({@code loadBalancingConfig}, {@code loadBalancingPolicy}): the starter applies a file's method configs
     * and retry throttling only, and a load-balancing policy named there would be dropped without a word.
     */
    public static @Nullable ServiceConfigDraft parseFile(String json, String source, List<ConfigProblem> problems) {
        return new ServiceConfigJson(source, problems, true).parseDocument(json);
    }

    /**
     * Parses {@code json}; problems are added to {@code problems}.
     *
     * @param source how to name the file in problems, e.g. {@code classpath:sc.json}
     * @return the draft (possibly partial when there were problems), or null when the text is not JSON
     */
    public static @Nullable ServiceConfigDraft parse(String json, String source, List<ConfigProblem> problems) {
        return new ServiceConfigJson(source, problems, false).parseDocument(json);
    }

    /**
     * Parses a service config given as a map in the shape grpc-java's {@code defaultServiceConfig} takes (the
     * JSON names), as {@link #parse(String, String, List)} parses its JSON text.
     *
     * @param source how to name the map in problems, e.g. its property path
     */
    public static @Nullable ServiceConfigDraft parse(Map<String, ?> serviceConfig, String source,
            List<ConfigProblem> problems) {
        return parse(Json.GSON.toJson(serviceConfig), source, problems);
    }

    /**
     * Parses and validates {@code json} into a service config (for use without Spring).
     *
     * @throws InvalidRetryConfigurationException listing every problem
     */
    public static ServiceConfig read(String json, String source) {
        List<ConfigProblem> problems = new ArrayList<>();
        return validated(parse(json, source, problems), problems);
    }

    /**
     * Parses and validates a service config given as a map in the shape grpc-java's
     * {@code defaultServiceConfig} takes (a name resolver's, for one).
     *
     * @throws InvalidRetryConfigurationException listing every problem
     */
    public static ServiceConfig read(Map<String, ?> serviceConfig, String source) {
        List<ConfigProblem> problems = new ArrayList<>();
        return validated(parse(serviceConfig, source, problems), problems);
    }

    private static ServiceConfig validated(@Nullable ServiceConfigDraft draft, List<ConfigProblem> problems) {
        ServiceConfig config = draft == null ? ServiceConfig.EMPTY
                : new RetryConfigValidator(problems).serviceConfig(draft, null);
        if (!problems.isEmpty()) {
            throw new InvalidRetryConfigurationException(problems);
        }
        return config;
    }

    /**
     * What the JSON reader found wrong, without its position (given apart), its path, its links and its advice
     * to read the file leniently: {@code Unterminated object}, {@code Expected name}, {@code malformed JSON}.
     */
    private static String syntaxError(Exception e) {
        String first = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage().lines().findFirst().orElse("");
        String text = LIBRARY_ADVICE.matcher(first).replaceFirst("").replaceFirst("\\s*at line \\d+ column \\d+.*$", "").trim();
        return text.isEmpty() ? "a syntax error (a missing or extra comma, quote, colon or bracket)" : text;
    }

    /** Line {@code number} (from 1) of {@code text}, trimmed and shortened for a report; null when there is none. */
    private static @Nullable String lineOf(String text, int number) {
        String line = text.lines().skip(Math.max(0, number - 1L)).findFirst().orElse(null);
        if (line == null) {
            return null;
        }
        line = line.strip();
        return line.length() > 80 ? line.substring(0, 77) + "..." : line;
    }

    private String at(String jsonPath) {
        return source + " " + jsonPath;
    }

    private @Nullable ServiceConfigDraft parseDocument(String json) {
        if (json == null || json.isBlank()) {
            problems.add(new ConfigProblem(at("$"), "", "must be a JSON object (the file is empty)",
                    "put a gRPC service config in the file, e.g. {\"methodConfig\": [...]}"));
            return null;
        }
        JsonElement root;
        JsonReader reader = new JsonReader(new StringReader(json));
        reader.setStrictness(Strictness.STRICT);
        try {
            root = Json.GSON.getAdapter(JsonElement.class).read(reader);
            if (reader.peek() != JsonToken.END_DOCUMENT) {
                problems.add(new ConfigProblem(at(reader.getPath()), null, "unexpected content after the JSON value",
                        "remove everything after the closing brace"));
                return null;
            }
        } catch (IOException | RuntimeException e) {
            Matcher position = POSITION.matcher(e.getMessage() == null ? "" : e.getMessage());
            String where = position.find() ? " at line " + position.group(1) + " column " + position.group(2) : "";
            String line = where.isEmpty() ? null : lineOf(json, Integer.parseInt(position.group(1)));
            problems.add(new ConfigProblem(at(reader.getPath()), line, "malformed JSON" + where + ": " + syntaxError(e),
                    "correct the JSON syntax at that position"));
            return null;
        }
        if (!root.isJsonObject()) {
            problems.add(new ConfigProblem(at("$"), abbreviate(root), "must be a JSON object",
                    "use the gRPC service config shape {\"methodConfig\": [...], \"retryThrottling\": {...}}"));
            return null;
        }
        JsonObject obj = root.getAsJsonObject();
        for (String key : file ? LOAD_BALANCING : List.<String>of()) {
            if (obj.has(key)) {
                problems.add(new ConfigProblem(at("$." + key), abbreviate(obj.get(key)), "a service-config file's load"
                        + " balancing is not applied: the starter takes the file's methodConfig and retryThrottling (the"
                        + " channel's load-balancing policy is set where the channel is configured)",
                        "remove " + key + " from the file and set the policy on the channel: on Spring Boot 3.5 (net.devh)"
                                + " grpc.client.<channel>.default-load-balancing-policy, on Spring Boot 4.1"
                                + " spring.grpc.client.channel.<channel>.default.load-balancing-policy"));
            }
        }
        List<MethodConfigDraft> methods = new ArrayList<>();
        JsonElement mcs = obj.get("methodConfig");
        if (mcs != null && !mcs.isJsonNull()) {
            if (!mcs.isJsonArray()) {
                wrongType("$.methodConfig", mcs, "a JSON array of method config objects");
            } else {
                JsonArray arr = mcs.getAsJsonArray();
                for (int i = 0; i < arr.size(); i++) {
                    MethodConfigDraft d = methodConfig(arr.get(i), "$.methodConfig[" + i + "]");
                    if (d != null) {
                        methods.add(d);
                    }
                }
            }
        }
        RetryThrottlingDraft throttling = null;
        JsonElement rt = obj.get("retryThrottling");
        if (rt != null && !rt.isJsonNull()) {
            if (!rt.isJsonObject()) {
                wrongType("$.retryThrottling", rt, "a JSON object {\"maxTokens\": ..., \"tokenRatio\": ...}");
            } else {
                JsonObject t = rt.getAsJsonObject();
                throttling = new RetryThrottlingDraft(at("$.retryThrottling"), ConfigNaming.JSON,
                        number(t, "$.retryThrottling", "maxTokens"), number(t, "$.retryThrottling", "tokenRatio"));
            }
        }
        return new ServiceConfigDraft(methods, throttling);
    }

    private @Nullable MethodConfigDraft methodConfig(JsonElement e, String path) {
        if (!e.isJsonObject()) {
            wrongType(path, e, "a JSON object");
            return null;
        }
        JsonObject o = e.getAsJsonObject();
        List<Sourced<MethodName>> names = new ArrayList<>();
        JsonElement nameEl = o.get("name");
        if (nameEl != null && !nameEl.isJsonNull()) {
            if (!nameEl.isJsonArray()) {
                wrongType(path + ".name", nameEl, "a JSON array of {\"service\": ..., \"method\": ...} objects");
            } else {
                JsonArray arr = nameEl.getAsJsonArray();
                for (int j = 0; j < arr.size(); j++) {
                    String np = path + ".name[" + j + "]";
                    JsonElement n = arr.get(j);
                    if (!n.isJsonObject()) {
                        wrongType(np, n, "a JSON object {\"service\": ..., \"method\": ...}");
                        continue;
                    }
                    String service = string(n.getAsJsonObject(), np, "service");
                    String method = string(n.getAsJsonObject(), np, "method");
                    names.add(new Sourced<>(new MethodName(service, method), at(np), n.toString()));
                }
            }
        }
        RetryPolicyField.Draft retry = null;
        JsonObject r = object(o, path, "retryPolicy");
        if (r != null) {
            String p = path + ".retryPolicy";
            Map<RetryPolicyField, Sourced<?>> values = new EnumMap<>(RetryPolicyField.class);
            for (RetryPolicyField f : RetryPolicyField.values()) {
                Sourced<?> v = switch (f.kind()) {
                    case INTEGER -> integer(r, p, f.jsonName());
                    case NUMBER -> number(r, p, f.jsonName());
                    case DURATION -> duration(r, p, f.jsonName());
                    case CODES -> codes(r, p, f.jsonName());
                };
                if (v != null) {
                    values.put(f, v);
                }
            }
            retry = RetryPolicyField.Draft.of(at(p), ConfigNaming.JSON, values);
        }
        HedgingPolicyDraft hedging = null;
        JsonObject h = object(o, path, "hedgingPolicy");
        if (h != null) {
            String p = path + ".hedgingPolicy";
            hedging = new HedgingPolicyDraft(at(p), ConfigNaming.JSON, integer(h, p, "maxAttempts"),
                    duration(h, p, "hedgingDelay"), codes(h, p, "nonFatalStatusCodes"));
        }
        Sourced<Boolean> waitForReady = null;
        JsonElement wfr = o.get("waitForReady");
        if (wfr != null && !wfr.isJsonNull()) {
            if (wfr.isJsonPrimitive() && wfr.getAsJsonPrimitive().isBoolean()) {
                waitForReady = new Sourced<>(wfr.getAsBoolean(), at(path + ".waitForReady"), wfr.toString());
            } else {
                wrongType(path + ".waitForReady", wfr, "true or false");
            }
        }
        Sourced<Long> maxReq = longValue(o, path, "maxRequestMessageBytes");
        Sourced<Long> maxResp = longValue(o, path, "maxResponseMessageBytes");
        return new MethodConfigDraft(at(path), ConfigNaming.JSON, names, waitForReady, duration(o, path, "timeout"),
                maxReq, maxResp, retry, hedging);
    }

    /** The value of {@code key} in {@code o}; null when it is absent or JSON null. */
    private static @Nullable JsonElement field(JsonObject o, String key) {
        JsonElement e = o.get(key);
        return e == null || e.isJsonNull() ? null : e;
    }

    /** The JSON object at {@code key}; null when it is absent, JSON null or (reported) not an object. */
    private @Nullable JsonObject object(JsonObject o, String parent, String key) {
        JsonElement e = field(o, key);
        if (e == null) {
            return null;
        }
        if (!e.isJsonObject()) {
            wrongType(parent + "." + key, e, "a JSON object");
            return null;
        }
        return e.getAsJsonObject();
    }

    private @Nullable String string(JsonObject o, String parent, String key) {
        JsonElement e = field(o, key);
        if (e == null) {
            return null;
        }
        if (e.isJsonPrimitive() && e.getAsJsonPrimitive().isString()) {
            return e.getAsString();
        }
        wrongType(parent + "." + key, e, "a JSON string");
        return null;
    }

    private @Nullable Sourced<Double> number(JsonObject o, String parent, String key) {
        JsonElement e = field(o, key);
        if (e == null) {
            return null;
        }
        String p = parent + "." + key;
        BigDecimal d = decimal(e);
        if (d == null) {
            wrongType(p, e, "a JSON number");
            return null;
        }
        return new Sourced<>(d.doubleValue(), at(p), e.getAsString());
    }

    private @Nullable Sourced<Integer> integer(JsonObject o, String parent, String key) {
        return whole(o, parent, key, BigDecimal::intValueExact, "a whole JSON number");
    }

    private @Nullable Sourced<Long> longValue(JsonObject o, String parent, String key) {
        return whole(o, parent, key, BigDecimal::longValueExact, "a whole number of bytes");
    }

    /** A whole number that {@code exact} takes (it throws when not integral or out of range), or null. */
    private <T> @Nullable Sourced<T> whole(JsonObject o, String parent, String key, Function<BigDecimal, T> exact,
            String expected) {
        JsonElement e = field(o, key);
        if (e == null) {
            return null;
        }
        String p = parent + "." + key;
        BigDecimal d = decimal(e);
        try {
            if (d != null) {
                return new Sourced<>(exact.apply(d), at(p), e.getAsString());
            }
        } catch (ArithmeticException ignored) {
            // not integral or out of range
        }
        wrongType(p, e, expected);
        return null;
    }

    private static @Nullable BigDecimal decimal(JsonElement e) {
        if (!e.isJsonPrimitive()) {
            return null;
        }
        JsonPrimitive p = e.getAsJsonPrimitive();
        if (!p.isNumber() && !p.isString()) {
            return null;
        }
        try {
            return new BigDecimal(p.getAsString().trim());
        } catch (NumberFormatException ex) {
            return null;
        }
    }

    private @Nullable Sourced<Duration> duration(JsonObject o, String parent, String key) {
        JsonElement e = field(o, key);
        if (e == null) {
            return null;
        }
        String p = parent + "." + key;
        if (e.isJsonPrimitive() && e.getAsJsonPrimitive().isString()) {
            Duration d = parseDuration(e.getAsString());
            if (d != null) {
                return new Sourced<>(d, at(p), e.getAsString());
            }
        }
        problems.add(new ConfigProblem(at(p), abbreviate(e), "must be a protobuf JSON duration string such as \"1.5s\"",
                "write seconds with an \"s\" suffix and up to 9 decimals, e.g. \"0.05s\" for 50 ms"));
        return null;
    }

    /** A protobuf JSON duration ({@code "1.5s"}, {@code "-0.1s"}), or null when {@code text} is not one. */
    public static @Nullable Duration parseDuration(String text) {
        Matcher m = DURATION.matcher(text.trim());
        if (!m.matches()) {
            return null;
        }
        long seconds = Long.parseLong(m.group(2));
        long nanos = 0;
        if (m.group(3) != null) {
            String frac = (m.group(3) + "000000000").substring(0, 9);
            nanos = Long.parseLong(frac);
        }
        Duration d = Duration.ofSeconds(seconds, nanos);
        return m.group(1) != null ? d.negated() : d;
    }

    private @Nullable Sourced<List<String>> codes(JsonObject o, String parent, String key) {
        JsonElement e = field(o, key);
        if (e == null) {
            return null;
        }
        String p = parent + "." + key;
        if (!e.isJsonArray()) {
            wrongType(p, e, "a JSON array of status code names or numbers");
            return null;
        }
        List<String> out = new ArrayList<>();
        JsonArray arr = e.getAsJsonArray();
        for (int i = 0; i < arr.size(); i++) {
            JsonElement c = arr.get(i);
            if (c.isJsonPrimitive() && (c.getAsJsonPrimitive().isString() || c.getAsJsonPrimitive().isNumber())) {
                out.add(c.getAsString());
            } else {
                wrongType(p + "[" + i + "]", c, "a status code name or number");
            }
        }
        return new Sourced<>(out, at(p), e.toString());
    }

    private void wrongType(String jsonPath, JsonElement e, String expected) {
        problems.add(new ConfigProblem(at(jsonPath), abbreviate(e), "must be " + expected,
                "write " + expected + " there"));
    }

    private static String abbreviate(JsonElement e) {
        String s = e.toString();
        return s.length() > 80 ? s.substring(0, 77) + "..." : s;
    }

    /** Made the first time a service config is parsed (text or map): a channel configured by properties alone never needs it. */
    private static final class Json {
        static final Gson GSON = new Gson();
    }
}
