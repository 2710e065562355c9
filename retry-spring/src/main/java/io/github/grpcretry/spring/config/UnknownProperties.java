package io.github.grpcretry.spring.config;

import io.github.grpcretry.config.RetryConfigResolver;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The start-up check of property keys that bind to nothing, for both Spring Boot lines: the known keys
 * are read from the bound property classes (records by their components, JavaBeans by their getters),
 * so a new property needs no line here; each line hands over the keys its property sources hold, in
 * Spring Boot's element form, and gets back every key that matches no property, with the closest known
 * key at the place where it went wrong.
 *
 * <p>Keys are compared in Spring Boot's uniform form (lower case, letters and digits only), so every
 * relaxed-binding spelling is accepted: {@code max-attempts-cap}, {@code maxAttemptsCap},
 * {@code max_attempts_cap} and the environment variable {@code GRPC_RETRY_CLIENTS_SVC_MAXATTEMPTSCAP}.
 * Only the scopes given are checked (a key outside them is never reported), and every level is checked,
 * however deep below list elements it lies.
 */
public final class UnknownProperties {

    /** The property that turns the failure into one warning per unknown key. */
    public static final String IGNORE_PROPERTY = "grpc.retry.ignore-unknown-properties";

    private static final int MAX_DEPTH = 16;

    private final List<Scope> scopes;

    private UnknownProperties(List<Scope> scopes) {
        this.scopes = List.copyOf(scopes);
    }

    /**
     * A key a property source holds.
     *
     * @param elements its elements as Spring Boot names them: a numeric list index as {@code [0]}, any
     *     other element (a map key in bracket form included) as written
     * @param name the key as the report shows it ({@code grpc.retry.clients.svc.max-attempt})
     * @param value its value as written, when the source has one
     * @param origin where it was set ({@code class path resource [application.yml] - 9:25}, an
     *     environment variable), when the source can tell
     */
    public record Key(List<String> elements, String name, @Nullable String value, @Nullable String origin) {

        public Key {
            elements = List.copyOf(elements);
            Objects.requireNonNull(name, "name");
        }
    }

    /**
     * A key that binds to nothing.
     *
     * @param name the key
     * @param value its value as written, if known
     * @param element the first element that matches no property ({@code max-attempt})
     * @param suggestion the closest known element at that place ({@code max-attempts}); null when none is close
     * @param suggestedKey the key with that element replaced; null without a suggestion
     * @param known the known elements at that place, in kebab case (empty below a plain value)
     * @param origin where it was set, when known
     */
    public record Unknown(String name, @Nullable String value, String element, @Nullable String suggestion,
            @Nullable String suggestedKey, List<String> known, @Nullable String origin) {

        public Unknown {
            known = List.copyOf(known);
        }

        /** Why the key is reported, with the suggestion. */
        public String reason() {
            String base = "unknown key: `" + element + "` binds to no property here, so the value has no effect";
            if (suggestion != null && suggestion.startsWith("[")) {
                return base + "; a name with a dot is one key only in brackets: did you mean `" + suggestion + "`?";
            }
            if (suggestion != null) {
                return base + "; did you mean `" + suggestion + "`?";
            }
            return known.isEmpty() ? base : base + "; the keys here are " + String.join(", ", known);
        }

        /** The problem the start-up report shows. */
        public ConfigProblem problem() {
            String fix = suggestion != null ? "rename it to " + suggestedKey : "remove it, or spell a key listed above";
            return new ConfigProblem(name, value, reason(), fix + " (or set " + IGNORE_PROPERTY
                    + "=true to log unknown keys instead of failing)");
        }

        /** The one warning logged for it with {@link UnknownProperties#IGNORE_PROPERTY} true. */
        public String warning() {
            return "Ignored " + name + (origin == null ? "" : " (" + origin + ")") + ": " + reason();
        }
    }

    /** Collects the checked scopes. */
    public static Builder builder() {
        return new Builder();
    }

    /** The checked scopes. */
    public static final class Builder {

        private final List<Scope> scopes = new ArrayList<>();

        private Builder() {
        }

        /**
         * Checks every key under {@code pattern} against the properties of {@code type}. A pattern is
         * dot-separated; {@code *} stands for any one element (a map key), {@code [*]} for any list index:
         * {@code spring.grpc.client.channel.*.service-config.method[*].retry}. A pattern inside a scope
         * already given, with no wildcard below it, adds {@code type}'s properties at that place instead
         * ({@code grpc.retry.deadline} inside {@code grpc.retry}).
         */
        public Builder scope(String pattern, Class<?> type) {
            List<String> elements = split(pattern);
            Node node = Node.of(type, 0);
            for (Scope s : scopes) {
                List<String> outer = s.pattern();
                if (elements.size() > outer.size() && elements.subList(0, outer.size()).equals(outer)
                        && elements.subList(outer.size(), elements.size()).stream().noneMatch(e -> e.contains("*"))) {
                    s.root().graft(elements.subList(outer.size(), elements.size()), node);
                    return this;
                }
            }
            scopes.add(new Scope(elements, node));
            return this;
        }

        public UnknownProperties build() {
            return new UnknownProperties(scopes);
        }
    }

    /**
     * Every key that matches no property, one per key (the first of several spellings of the same key),
     * in the order given.
     */
    public List<Unknown> check(Collection<Key> keys) {
        List<Unknown> out = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        for (Key key : keys) {
            List<String> uniform = new ArrayList<>(key.elements().size());
            for (String e : key.elements()) {
                uniform.add(isIndex(e) ? e : uniform(e));
            }
            if (!seen.add(String.join(".", uniform))) {
                continue;
            }
            Scope scope = scopeOf(uniform);
            if (scope == null) {
                continue;
            }
            Unknown unknown = scope.root().find(key, scope.pattern().size());
            if (unknown != null) {
                out.add(unknown);
            }
        }
        return out;
    }

    /**
     * The start-up problems of the unknown keys among {@code keys}; with {@code ignore}
     * ({@link #IGNORE_PROPERTY}) none, each unknown key logged once through {@code warnings} instead.
     */
    public List<ConfigProblem> problems(Collection<Key> keys, boolean ignore, Consumer<String> warnings) {
        List<ConfigProblem> problems = new ArrayList<>();
        for (Unknown u : check(keys)) {
            if (ignore) {
                warnings.accept(u.warning());
            } else {
                problems.add(u.problem());
            }
        }
        return problems;
    }

    /**
     * Resolves the configuration and reports the unknown keys' problems together with the invalid
     * values, in one start-up report.
     *
     * @throws InvalidRetryConfigurationException listing the unknown keys, then every invalid value
     */
    public static <T> T resolveReporting(List<ConfigProblem> unknownKeys, Supplier<T> resolve) {
        T resolved;
        try {
            resolved = resolve.get();
        } catch (InvalidRetryConfigurationException e) {
            if (unknownKeys.isEmpty()) {
                throw e;
            }
            List<ConfigProblem> all = new ArrayList<>(unknownKeys);
            all.addAll(e.getProblems());
            throw new InvalidRetryConfigurationException(all);
        }
        if (!unknownKeys.isEmpty()) {
            throw new InvalidRetryConfigurationException(unknownKeys);
        }
        return resolved;
    }

    /** Whether a key lies in a checked scope (a line may pass only those). */
    public boolean inScope(List<String> elements) {
        List<String> uniform = new ArrayList<>(elements.size());
        for (String e : elements) {
            uniform.add(isIndex(e) ? e : uniform(e));
        }
        return scopeOf(uniform) != null;
    }

    /**
     * Whether a key whose first element is {@code uniformFirst} (Spring Boot's uniform form) can lie in a
     * checked scope: a line's cheap test before it spells a key out for {@link #inScope}.
     */
    public boolean mayBeInScope(String uniformFirst) {
        for (Scope s : scopes) {
            String first = s.pattern().get(0);
            if (first.equals("*") || first.equals(uniformFirst)) {
                return true;
            }
        }
        return false;
    }

    private @Nullable Scope scopeOf(List<String> uniform) {
        for (Scope s : scopes) {
            if (s.matches(uniform)) {
                return s;
            }
        }
        return null;
    }

    private record Scope(List<String> pattern, Node root) {

        boolean matches(List<String> uniform) {
            if (uniform.size() <= pattern.size()) {
                return false;
            }
            for (int i = 0; i < pattern.size(); i++) {
                String p = pattern.get(i);
                String e = uniform.get(i);
                boolean ok = p.equals("*") ? !isIndex(e) : p.equals("[*]") ? isIndex(e) : p.equals(e);
                if (!ok) {
                    return false;
                }
            }
            return true;
        }
    }

    /** A place in the property tree: an object with named properties, a map, a list, or a plain value. */
    private static final class Node {

        enum Kind { OBJECT, MAP, LIST, VALUE, VALUES }

        final Kind kind;
        /** OBJECT: uniform name → (kebab name, node). */
        final Map<String, Map.Entry<String, Node>> properties;
        /** MAP and LIST: the node of the values. */
        final @Nullable Node element;

        private Node(Kind kind, Map<String, Map.Entry<String, Node>> properties, @Nullable Node element) {
            this.kind = kind;
            this.properties = properties;
            this.element = element;
        }

        static final Node VALUE = new Node(Kind.VALUE, Map.of(), null);
        static final Node VALUES = new Node(Kind.VALUES, Map.of(), null);

        static Node of(Type type, int depth) {
            if (depth > MAX_DEPTH) {
                throw new IllegalStateException("property tree deeper than " + MAX_DEPTH + " levels at " + type);
            }
            if (type instanceof ParameterizedType p && p.getRawType() instanceof Class<?> raw) {
                if (Map.class.isAssignableFrom(raw)) {
                    return new Node(Kind.MAP, Map.of(), of(p.getActualTypeArguments()[1], depth + 1));
                }
                if (Collection.class.isAssignableFrom(raw)) {
                    Node e = of(p.getActualTypeArguments()[0], depth + 1);
                    return e.kind == Kind.VALUE ? VALUES : new Node(Kind.LIST, Map.of(), e);
                }
                return of(raw, depth);
            }
            if (!(type instanceof Class<?> c)) {
                return VALUE;
            }
            if (c.isArray()) {
                Node e = of(c.getComponentType(), depth + 1);
                return e.kind == Kind.VALUE ? VALUES : new Node(Kind.LIST, Map.of(), e);
            }
            if (Map.class.isAssignableFrom(c) || Collection.class.isAssignableFrom(c)) {
                return new Node(Kind.MAP, Map.of(), VALUE);
            }
            if (!isPropertyObject(c)) {
                return VALUE;
            }
            Map<String, Map.Entry<String, Node>> properties = new LinkedHashMap<>();
            if (c.isRecord()) {
                for (RecordComponent rc : c.getRecordComponents()) {
                    properties.put(uniform(rc.getName()), Map.entry(kebab(rc.getName()), of(rc.getGenericType(), depth + 1)));
                }
            } else {
                for (Method m : c.getMethods()) {
                    String name = propertyName(m);
                    if (name != null) {
                        properties.put(uniform(name), Map.entry(kebab(name), of(m.getGenericReturnType(), depth + 1)));
                    }
                }
            }
            return new Node(Kind.OBJECT, properties, null);
        }

        /** Adds {@code node}'s properties at {@code path} below this object. */
        void graft(List<String> path, Node node) {
            Node at = this;
            for (int i = 0; i < path.size(); i++) {
                String u = path.get(i);
                Map.Entry<String, Node> child = at.properties.get(u);
                if (child == null) {
                    Node fresh = i == path.size() - 1 ? node : new Node(Kind.OBJECT, new LinkedHashMap<>(), null);
                    at.properties.put(u, Map.entry(u, fresh));
                    at = fresh;
                } else {
                    at = child.getValue();
                }
            }
            if (at != node && at.kind == Kind.OBJECT && node.kind == Kind.OBJECT) {
                node.properties.forEach(at.properties::putIfAbsent);
            }
        }

        /** The first place where {@code key} leaves this tree, from element {@code from} on; null when it fits. */
        @Nullable Unknown find(Key key, int from) {
            Node at = this;
            List<String> elements = key.elements();
            int mapKey = -1;
            for (int i = from; i < elements.size(); i++) {
                String e = elements.get(i);
                switch (at.kind) {
                    case MAP -> {
                        at = Objects.requireNonNull(at.element);
                        mapKey = i;
                    }
                    case LIST -> {
                        if (!isIndex(e)) {
                            return unknown(key, i, null, List.of("[0], [1], ..."));
                        }
                        at = Objects.requireNonNull(at.element);
                    }
                    case VALUES -> {
                        if (!isIndex(e)) {
                            return unknown(key, i, null, List.of());
                        }
                        // a list of plain values: one index, then nothing
                        return i == elements.size() - 1 ? null : unknown(key, i + 1, null, List.of());
                    }
                    case VALUE -> {
                        return unknown(key, i, null, List.of());
                    }
                    case OBJECT -> {
                        Map.Entry<String, Node> child = isIndex(e) ? null : at.properties.get(uniform(e));
                        if (child == null && mapKey == i - 1) {
                            Unknown dotted = dottedMapKey(key, mapKey, at);
                            if (dotted != null) {
                                return dotted;
                            }
                        }
                        if (child == null) {
                            List<String> known = new ArrayList<>();
                            at.properties.values().forEach(p -> known.add(p.getKey()));
                            return unknown(key, i, closest(isIndex(e) ? e : uniform(e), at.properties), known);
                        }
                        at = child.getValue();
                    }
                    default -> throw new IllegalStateException(at.kind.toString());
                }
            }
            return null;
        }

        /**
         * A map key written with a dot and without brackets ({@code grpc.retry.clients.my.service.max-attempts-cap}):
         * Spring reads {@code my} as the key and {@code service} as its property. When the elements after some
         * further dot fit the map's values, the key was meant whole: the suggestion is its bracket form
         * ({@code [my.service]}). Null when no such split fits.
         */
        private static @Nullable Unknown dottedMapKey(Key key, int mapKey, Node value) {
            List<String> elements = key.elements();
            for (int end = mapKey + 2; end < elements.size(); end++) {
                if (isIndex(elements.get(end - 1)) || value.find(key, end) != null) {
                    continue;
                }
                String bracketed = "[" + String.join(".", elements.subList(mapKey, end)) + "]";
                List<String> fixed = new ArrayList<>(elements.subList(0, mapKey));
                fixed.add(bracketed);
                fixed.addAll(elements.subList(end, elements.size()));
                return new Unknown(key.name(), key.value(), elements.get(mapKey + 1), bracketed, join(fixed), List.of(),
                        key.origin());
            }
            return null;
        }

        private static Unknown unknown(Key key, int index, @Nullable String suggestion, List<String> known) {
            List<String> elements = key.elements();
            String suggestedKey = null;
            if (suggestion != null) {
                List<String> fixed = new ArrayList<>(elements);
                fixed.set(index, suggestion);
                suggestedKey = join(fixed);
            }
            return new Unknown(key.name(), key.value(), elements.get(index), suggestion, suggestedKey, known, key.origin());
        }

        /** The known property closest to {@code uniform} (kebab case), or null when none is close. */
        private static @Nullable String closest(String uniform, Map<String, Map.Entry<String, Node>> properties) {
            String best = null;
            int bestDistance = Integer.MAX_VALUE;
            for (Map.Entry<String, Map.Entry<String, Node>> p : properties.entrySet()) {
                int d = distance(uniform, p.getKey());
                if (uniform.length() >= 4 && (p.getKey().startsWith(uniform) || uniform.startsWith(p.getKey()))) {
                    d = Math.min(d, 2); // a key cut short or run on: max-attempt for max-attempts-cap
                }
                if (d < bestDistance) {
                    bestDistance = d;
                    best = p.getValue().getKey();
                }
            }
            int allowed = Math.max(1, Math.min(3, uniform.length() / 3));
            return bestDistance <= allowed ? best : null;
        }
    }

    /** A record, or a class of this project's packages that is not an enum: an object with properties. */
    private static boolean isPropertyObject(Class<?> c) {
        if (c.isPrimitive() || c.isEnum() || c.isInterface()) {
            return false;
        }
        return c.isRecord() || c.getName().startsWith("io.github.grpcretry.");
    }

    /** The JavaBean property a getter reads ({@code getMaxAttempts} → {@code maxAttempts}); null when none. */
    private static @Nullable String propertyName(Method m) {
        if (Modifier.isStatic(m.getModifiers()) || m.getParameterCount() != 0 || m.getReturnType() == void.class
                || m.getDeclaringClass() == Object.class) {
            return null;
        }
        String n = m.getName();
        String rest;
        if (n.startsWith("get") && n.length() > 3) {
            rest = n.substring(3);
        } else if (n.startsWith("is") && n.length() > 2 && (m.getReturnType() == boolean.class || m.getReturnType() == Boolean.class)) {
            rest = n.substring(2);
        } else {
            return null;
        }
        return Character.toLowerCase(rest.charAt(0)) + rest.substring(1);
    }

    /** Spring Boot's uniform form of an element: lower case, letters and digits only. */
    static String uniform(String element) {
        return RetryConfigResolver.uniformName(element);
    }

    /** {@code maxAttemptsCap} → {@code max-attempts-cap}. */
    static String kebab(String javaName) {
        StringBuilder b = new StringBuilder(javaName.length() + 4);
        for (int i = 0; i < javaName.length(); i++) {
            char c = javaName.charAt(i);
            if (Character.isUpperCase(c)) {
                if (i > 0) {
                    b.append('-');
                }
                b.append(Character.toLowerCase(c));
            } else {
                b.append(c);
            }
        }
        return b.toString().toLowerCase(Locale.ROOT);
    }

    /** The optimal string alignment distance (Levenshtein with adjacent transpositions). */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }

    private static boolean isIndex(String element) {
        return element.length() > 2 && element.charAt(0) == '[' && element.charAt(element.length() - 1) == ']'
                && element.substring(1, element.length() - 1).chars().allMatch(Character::isDigit);
    }

    private static List<String> split(String pattern) {
        List<String> out = new ArrayList<>();
        for (String part : pattern.split("\\.")) {
            int bracket = part.indexOf('[');
            String head = bracket < 0 ? part : part.substring(0, bracket);
            if (!head.isEmpty()) {
                out.add(head.equals("*") ? head : uniform(head));
            }
            if (bracket >= 0) {
                out.add(part.substring(bracket));
            }
        }
        return out;
    }

    /** Elements joined as a key: {@code a.b[0].c}. */
    private static String join(List<String> elements) {
        StringBuilder b = new StringBuilder();
        for (String e : elements) {
            if (!isIndex(e) && b.length() > 0) {
                b.append('.');
            }
            b.append(e);
        }
        return b.toString();
    }
}
