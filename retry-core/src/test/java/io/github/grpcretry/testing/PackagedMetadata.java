package io.github.grpcretry.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.github.grpcretry.policy.AdaptiveHedgingPolicy;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.internal.time.Durations;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.grpc.Status;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiFunction;

/**
 * The configuration metadata a Boot line's auto-configuration jar ships
 * ({@code META-INF/spring-configuration-metadata.json}: what Spring Boot's configuration processor
 * generates, merged with the module's additional file), and the checks both lines run on it: every key
 * described, every default of the code in the metadata, no hand-written indexed names ({@code [0]}), the
 * channel tree completed from the map's value type (GLOBAL's channel-wide settings listed with their
 * built-in defaults), and every status-code list bound as
 * {@link Status.Code} values (so that an IDE completes the code names under every channel and every
 * method entry).
 */
public final class PackagedMetadata {

    private static final String RESOURCE = "META-INF/spring-configuration-metadata.json";
    private static final String GLOBAL = "grpc.retry.clients.GLOBAL.";

    private final URL source;
    private final Map<String, JsonObject> properties = new TreeMap<>();
    private final Map<String, JsonObject> hints = new TreeMap<>();

    private PackagedMetadata(URL source, JsonObject root) {
        this.source = source;
        for (JsonElement e : root.getAsJsonArray("properties")) {
            properties.put(e.getAsJsonObject().get("name").getAsString(), e.getAsJsonObject());
        }
        if (root.has("hints")) {
            for (JsonElement e : root.getAsJsonArray("hints")) {
                hints.put(e.getAsJsonObject().get("name").getAsString(), e.getAsJsonObject());
            }
        }
    }

    /** The metadata on the classpath that describes {@code grpc.retry} (the module's own, not a dependency's). */
    public static PackagedMetadata load(ClassLoader loader) {
        try {
            for (URL url : Collections.list(loader.getResources(RESOURCE))) {
                JsonObject root;
                try (Reader r = new InputStreamReader(url.openStream(), StandardCharsets.UTF_8)) {
                    root = JsonParser.parseReader(r).getAsJsonObject();
                }
                for (JsonElement g : root.getAsJsonArray("groups")) {
                    if (g.getAsJsonObject().get("name").getAsString().equals("grpc.retry")) {
                        return new PackagedMetadata(url, root);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        throw new AssertionError("no " + RESOURCE + " with the group grpc.retry on the classpath: is"
                + " spring-boot-configuration-processor on the annotation processor path?");
    }

    public URL source() {
        return source;
    }

    public Set<String> names() {
        return properties.keySet();
    }

    public JsonObject property(String name) {
        JsonObject p = properties.get(name);
        assertThat(p).as(name + " in " + source).isNotNull();
        return p;
    }

    public Map<String, JsonObject> hints() {
        return hints;
    }

    /**
     * What both Spring Boot lines ship alike: every key described and none hand-written but GLOBAL's
     * channel-wide settings ({@link #assertEveryKeyDescribedAndNoneHandWritten}), the keys of the contract outside a channel,
     * a channel tree typed down to its two status-code lists ({@link #assertChannelTreeIsTyped}), and
     * the hints (the GLOBAL key, the engine names, the health statuses).
     */
    public void assertCompletionContract(Class<?> channelType) {
        assertEveryKeyDescribedAndNoneHandWritten(channelType);
        assertThat(names()).contains("grpc.retry.enabled", "grpc.retry.engine", "grpc.retry.clients",
                "grpc.retry.guard.enabled", "grpc.retry.health.status-when-throttled", "grpc.retry.observation.enabled",
                "grpc.retry.deadline.default-timeout", "grpc.retry.deadline.reserve", "grpc.retry.deadline.min-remaining",
                "grpc.retry.deadline.http.header", "grpc.retry.deadline.http.max");
        assertThat(assertChannelTreeIsTyped(channelType)).containsExactlyInAnyOrder(
                GLOBAL + "service-config.method[0].retry.retryable-status-codes",
                GLOBAL + "service-config.method[0].hedging.non-fatal-status-codes");
        assertThat(hints).containsKeys("grpc.retry.engine", "grpc.retry.clients.keys",
                "grpc.retry.health.status-when-throttled");
        assertThat(hints.get("grpc.retry.clients.keys").toString()).contains("GLOBAL");
        assertThat(property("grpc.retry.engine").get("defaultValue").getAsString()).isEqualTo("interceptor");
    }

    /**
     * Every key has a description, and none is an indexed name ({@code [0]}). Under
     * {@code grpc.retry.clients} the metadata lists only GLOBAL's channel-wide settings (a map's value
     * type is not listed by the processor; these entries carry the built-in defaults an IDE shows): each
     * is a key of {@code channelType} outside the method entries, every such key is listed, and each
     * built-in default is the code's ({@link ChannelRetryConfig}, {@link RetryBudgetPolicy}).
     */
    public void assertEveryKeyDescribedAndNoneHandWritten(Class<?> channelType) {
        List<String> channelWide = channelKeys(channelType).stream()
                .filter(k -> !k.startsWith(GLOBAL + "service-config.method")).toList();
        for (Map.Entry<String, JsonObject> e : properties.entrySet()) {
            String name = e.getKey();
            assertThat(name).as("an indexed name is not what the processor generates").doesNotContain("[");
            if (name.startsWith("grpc.retry.clients.")) {
                assertThat(channelWide).as("hand-written channel keys: GLOBAL's channel-wide settings only")
                        .contains(name);
            }
            JsonElement d = e.getValue().get("description");
            assertThat(d == null ? "" : d.getAsString()).as(name + " description").isNotBlank();
        }
        assertThat(properties.keySet()).as("GLOBAL's channel-wide settings").containsAll(channelWide);
        Map<String, String> builtIn = Map.ofEntries(
                Map.entry(GLOBAL + "max-attempts-cap", String.valueOf(ChannelRetryConfig.DEFAULT_MAX_ATTEMPTS_CAP)),
                Map.entry(GLOBAL + "per-rpc-buffer-limit", megabytes(ChannelRetryConfig.DEFAULT_PER_RPC_BUFFER_LIMIT)),
                Map.entry(GLOBAL + "retry-buffer-size", megabytes(ChannelRetryConfig.DEFAULT_RETRY_BUFFER_SIZE)),
                Map.entry(GLOBAL + "budget.min-retries-per-second", whole(RetryBudgetPolicy.DEFAULT_MIN_RETRIES_PER_SECOND)),
                Map.entry(GLOBAL + "budget.ttl", Durations.toText(RetryBudgetPolicy.DEFAULT_TTL)),
                Map.entry(GLOBAL + "retry-info", "true"),
                Map.entry(GLOBAL + "avoid-tried-backends", "true"),
                Map.entry(GLOBAL + "backend-picks", String.valueOf(ChannelRetryConfig.DEFAULT_BACKEND_PICKS)),
                Map.entry(GLOBAL + "retry-info-max-delay", Durations.toText(ChannelRetryConfig.DEFAULT_RETRY_INFO_MAX_DELAY)),
                Map.entry(GLOBAL + "adaptive-hedging.enabled", "false"),
                Map.entry(GLOBAL + "adaptive-hedging.max-extra-load",
                        String.valueOf(AdaptiveHedgingPolicy.DEFAULT_MAX_EXTRA_LOAD)),
                Map.entry(GLOBAL + "adaptive-hedging.min-delay", Durations.toText(AdaptiveHedgingPolicy.DEFAULT_MIN_DELAY)),
                Map.entry(GLOBAL + "adaptive-hedging.min-samples", String.valueOf(AdaptiveHedgingPolicy.DEFAULT_MIN_SAMPLES)),
                Map.entry(GLOBAL + "adaptive-hedging.window", Durations.toText(AdaptiveHedgingPolicy.DEFAULT_WINDOW)),
                Map.entry(GLOBAL + "streams.max-resumes", String.valueOf(ChannelRetryConfig.Streams.DEFAULT_MAX_RESUMES)));
        for (String key : channelWide) {
            JsonElement declared = properties.get(key).get("defaultValue");
            if (builtIn.containsKey(key)) {
                assertThat(declared).as(key + " default").isNotNull();
                assertThat(declared.getAsString()).as(key + " default").isEqualTo(builtIn.get(key));
            } else {
                assertThat(declared).as(key + ": no built-in default").isNull();
            }
        }
        for (String hint : hints.keySet()) {
            assertThat(hint).as("hint " + hint).doesNotContain("[");
        }
    }

    private static String megabytes(long bytes) {
        assertThat(bytes % (1 << 20)).as(bytes + " bytes in whole MB").isZero();
        return (bytes >> 20) + "MB";
    }

    private static String whole(double value) {
        assertThat(value).as("a whole number").isEqualTo(Math.rint(value));
        return String.valueOf((long) value);
    }

    /**
     * Every key whose value, bound from an empty environment, is not null (a default of the code) has
     * that default in the metadata, and a key whose bound value is null has none. Keys outside the given
     * prefixes (those Spring Boot generates for an {@code @Endpoint}) and GLOBAL's keys (checked against
     * the built-in defaults by {@link #assertEveryKeyDescribedAndNoneHandWritten}) are not checked here.
     *
     * @param bound the properties objects bound from an empty environment, by their prefix
     *     ({@code grpc.retry}, {@code grpc.retry.deadline})
     * @param convert the line's conversion of a metadata default (a JSON string, number or boolean) to a type
     */
    public void assertDefaultsMatch(Map<String, Object> bound, BiFunction<Object, Class<?>, Object> convert) {
        List<String> checked = new ArrayList<>();
        for (Map.Entry<String, JsonObject> e : properties.entrySet()) {
            String name = e.getKey();
            Map.Entry<String, Object> owner = owner(name, bound);
            if (owner == null || name.startsWith("grpc.retry.clients.")) {
                continue; // an endpoint's keys; GLOBAL's keys: built-in defaults, checked against the code above
            }
            Object value = read(owner.getValue(), name.substring(owner.getKey().length() + 1));
            JsonElement declared = e.getValue().get("defaultValue");
            if (value == null || value instanceof Map<?, ?> || value instanceof Collection<?>) {
                assertThat(declared).as(name + ": no default in the code, none in the metadata").isNull();
                continue;
            }
            assertThat(declared).as(name + ": the code's default " + value + " in the metadata").isNotNull();
            Object raw = declared.getAsJsonPrimitive().isBoolean() ? declared.getAsBoolean()
                    : declared.getAsJsonPrimitive().isNumber() ? declared.getAsNumber().toString() : declared.getAsString();
            assertThat(convert.apply(raw, value.getClass())).as(name + " default").isEqualTo(value);
            checked.add(name);
        }
        assertThat(checked).as("keys with a default").isNotEmpty();
    }

    /**
     * The channel tree ({@code grpc.retry.clients}) is a map whose value type the IDE walks, and every
     * status-code list in it, under every channel and every method entry, is a {@code List<Status.Code>}.
     *
     * @return the keys of the status-code lists found, as {@link #channelKeys} writes them
     */
    public List<String> assertChannelTreeIsTyped(Class<?> channelType) {
        String clients = property("grpc.retry.clients").get("type").getAsString();
        assertThat(clients.replace('$', '.')).as("grpc.retry.clients type")
                .isEqualTo("java.util.Map<java.lang.String," + channelType.getName().replace('$', '.') + ">");
        List<String> codeLists = new ArrayList<>();
        leaves(channelType).forEach((key, type) -> {
            if (key.endsWith("-status-codes")) {
                assertThat(type instanceof ParameterizedType pt && rawType(pt) == List.class
                        && pt.getActualTypeArguments()[0] == Status.Code.class).as(key + " is a List<Status.Code>").isTrue();
                codeLists.add(key);
            }
        });
        return codeLists;
    }

    /**
     * Every key of a channel's tree, as a user writes it under GLOBAL (lists of entries with index 0:
     * {@code grpc.retry.clients.GLOBAL.service-config.method[0].retry.max-attempts}), read from the
     * channel's property type: what an IDE completes under {@code grpc.retry.clients.<channel>}.
     */
    public static List<String> channelKeys(Class<?> channelType) {
        return new ArrayList<>(leaves(channelType).keySet());
    }

    /** The keys of a channel's tree (as {@link #channelKeys} writes them) and the type each is bound as. */
    private static Map<String, Type> leaves(Class<?> channelType) {
        Map<String, Type> keys = new LinkedHashMap<>();
        leaves(channelType, GLOBAL, keys, 0);
        return keys;
    }

    private static void leaves(Class<?> type, String prefix, Map<String, Type> keys, int depth) {
        assertThat(depth).as("property tree depth at " + prefix).isLessThan(8);
        for (Map.Entry<String, Type> p : beanProperties(type).entrySet()) {
            String name = prefix + kebabCase(p.getKey());
            Type t = p.getValue();
            Class<?> raw = rawType(t);
            if (List.class.isAssignableFrom(raw) && t instanceof ParameterizedType pt
                    && isPropertyGroup(rawType(pt.getActualTypeArguments()[0]))) {
                leaves(rawType(pt.getActualTypeArguments()[0]), name + "[0].", keys, depth + 1);
            } else if (isPropertyGroup(raw)) {
                leaves(raw, name + ".", keys, depth + 1);
            } else {
                keys.put(name, t);
            }
        }
    }

    private static String kebabCase(String camel) {
        StringBuilder out = new StringBuilder();
        for (char c : camel.toCharArray()) {
            if (Character.isUpperCase(c)) {
                out.append('-').append(Character.toLowerCase(c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /** A nested class of the project's own (a group of properties), not a value type. */
    private static boolean isPropertyGroup(Class<?> type) {
        return type.getName().startsWith("io.github.grpcretry.") && !type.isEnum();
    }

    private static Class<?> rawType(Type t) {
        if (t instanceof Class<?> c) {
            return c;
        }
        if (t instanceof ParameterizedType pt) {
            return (Class<?>) pt.getRawType();
        }
        return Object.class;
    }

    /** The bound properties of a JavaBean (getters with setters) or a record (its components). */
    private static Map<String, Type> beanProperties(Class<?> type) {
        Map<String, Type> out = new LinkedHashMap<>();
        if (type.isRecord()) {
            for (var c : type.getRecordComponents()) {
                out.put(c.getName(), c.getGenericType());
            }
            return out;
        }
        for (Method m : type.getMethods()) {
            if (Modifier.isStatic(m.getModifiers()) || m.getParameterCount() != 0 || m.getDeclaringClass() == Object.class) {
                continue;
            }
            String n = m.getName();
            String prop = n.startsWith("get") && n.length() > 3 ? n.substring(3)
                    : n.startsWith("is") && n.length() > 2 ? n.substring(2) : null;
            if (prop != null) {
                out.put(Character.toLowerCase(prop.charAt(0)) + prop.substring(1), m.getGenericReturnType());
            }
        }
        return out;
    }

    private static Map.Entry<String, Object> owner(String name, Map<String, Object> bound) {
        Map.Entry<String, Object> best = null;
        for (Map.Entry<String, Object> b : bound.entrySet()) {
            if (name.startsWith(b.getKey() + ".") && (best == null || b.getKey().length() > best.getKey().length())) {
                best = b;
            }
        }
        return best;
    }

    /** The value at a dotted kebab-case path ({@code http.max}) of a bound properties object. */
    private static Object read(Object bean, String path) {
        Object current = bean;
        for (String segment : path.split("\\.")) {
            if (current == null) {
                return null;
            }
            current = get(current, segment);
        }
        return current;
    }

    private static Object get(Object bean, String kebabName) {
        for (String name : beanProperties(bean.getClass()).keySet()) {
            if (kebabCase(name).equals(kebabName)) {
                String cap = Character.toUpperCase(name.charAt(0)) + name.substring(1);
                for (String candidate : List.of(name, "get" + cap, "is" + cap)) {
                    try {
                        return bean.getClass().getMethod(candidate).invoke(bean);
                    } catch (NoSuchMethodException e) {
                        // the next form
                    } catch (IllegalAccessException | InvocationTargetException e) {
                        throw new IllegalStateException("reading " + name + " of " + bean.getClass().getName(), e);
                    }
                }
            }
        }
        throw new AssertionError(bean.getClass().getName() + " has no property " + kebabName);
    }

    /**
     * What Spring Boot's start-up report says, on either line, of the unknown status code in the test
     * resource {@code origin/bad-status-code.yml}: the property, the value, its line, the converter's rule
     * and (in the action) the valid names.
     */
    public static String[] unknownStatusCodeReport() {
        return new String[] {"APPLICATION FAILED TO START",
                "Property: grpc.retry.clients.inventory.service-config.method[0].retry.retryable-status-codes[1]",
                "Value: \"UNAVAILABEL\"",
                "Origin: class path resource [origin/bad-status-code.yml] - 14:",
                "'UNAVAILABEL' is not a gRPC status code: use a name in any case (UNAVAILABLE, unavailable) or a number"
                        + " from 0 to 16 (14)",
                "DEADLINE_EXCEEDED"};
    }
}
