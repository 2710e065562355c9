package io.github.grpcretry.integration;

import io.github.grpcretry.integration.RetryConfigResolver.AdaptiveHedgingProperties;
import io.github.grpcretry.integration.RetryConfigResolver.BoundValues;
import io.github.grpcretry.integration.RetryConfigResolver.BudgetProperties;
import io.github.grpcretry.integration.RetryConfigResolver.ClientProperties;
import io.github.grpcretry.integration.RetryConfigResolver.HedgingProperties;
import io.github.grpcretry.integration.RetryConfigResolver.MethodProperties;
import io.github.grpcretry.integration.RetryConfigResolver.NameProperties;
import io.github.grpcretry.integration.RetryConfigResolver.RetryProperties;
import io.github.grpcretry.integration.RetryConfigResolver.RetryThrottlingProperties;
import io.github.grpcretry.integration.RetryConfigResolver.ServiceConfigProperties;
import io.github.grpcretry.integration.RetryConfigResolver.Size;
import io.github.grpcretry.internal.config.RetryPolicyField;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The one mapping of bound property objects (the {@code grpc.retry.clients.<channel>} tree of either
 * Spring Boot line, JavaBeans with getters or records with accessors, and Spring Boot 4's own
 * {@code spring.grpc.client.channel.<name>.service-config} records) to the plain records of
 * {@link RetryConfigResolver}. Every value is read by its Java property name: {@code name()} (a record
 * accessor), else {@code getName()} or {@code isName()}; the retry-policy fields are those of
 * {@link RetryPolicyField}, so a new field needs no line here. Framework types (sizes, resources) are
 * converted by the line's {@link BoundValues}; numbers, durations, booleans, strings and status codes
 * are converted here.
 *
 * <p>Strict (the project's own property classes): a property without an accessor is a programming error
 * and fails at once, naming the class and the property. Lenient (a framework's own service-config type,
 * which may lack a field): such a property counts as not set.
 */
final class BoundProperties {

    private static final Map<Class<?>, Map<String, Optional<Method>>> ACCESSORS = new ConcurrentHashMap<>();

    private final BoundValues values;
    private final boolean strict;

    BoundProperties(BoundValues values, boolean strict) {
        this.values = values;
        this.strict = strict;
    }

    ClientProperties client(@Nullable Object c) {
        if (c == null) {
            return new ClientProperties(null, null, null, null, null, null, null, null, null, null, null);
        }
        Object budget = get(c, "budget");
        Object file = get(c, "serviceConfigFile");
        return new ClientProperties(
                serviceConfig(get(c, "serviceConfig")),
                file == null ? null : values.file(file),
                budget == null ? null : new BudgetProperties(number(get(budget, "ratio")),
                        number(get(budget, "minRetriesPerSecond")), duration(get(budget, "ttl"))),
                integer(get(c, "maxAttemptsCap")),
                size(get(c, "perRpcBufferLimit")),
                size(get(c, "retryBufferSize")),
                duration(get(c, "connectTimeout")),
                string(get(c, "resilience4jRetry")),
                (Boolean) get(c, "retryInfo"),
                duration(get(c, "retryInfoMaxDelay")),
                adaptiveHedging(get(c, "adaptiveHedging")));
    }

    private @Nullable AdaptiveHedgingProperties adaptiveHedging(@Nullable Object a) {
        return a == null ? null : new AdaptiveHedgingProperties((Boolean) get(a, "enabled"),
                number(get(a, "maxExtraLoad")), duration(get(a, "minDelay")), duration(get(a, "maxDelay")),
                integer(get(a, "minSamples")), duration(get(a, "window")));
    }

    @Nullable ServiceConfigProperties serviceConfig(@Nullable Object sc) {
        if (sc == null) {
            return null;
        }
        List<@Nullable MethodProperties> methods = null;
        List<?> given = list(get(sc, "method"));
        if (given != null) {
            methods = new ArrayList<>(given.size());
            for (Object m : given) {
                methods.add(m == null ? null : method(m));
            }
        }
        Object t = get(sc, "retrythrottling");
        return new ServiceConfigProperties(methods, t == null ? null
                : new RetryThrottlingProperties(number(get(t, "maxTokens")), number(get(t, "tokenRatio"))));
    }

    private MethodProperties method(Object m) {
        List<@Nullable NameProperties> names = null;
        List<?> given = list(get(m, "name"));
        if (given != null) {
            names = new ArrayList<>(given.size());
            for (Object n : given) {
                names.add(n == null ? null : new NameProperties(string(get(n, "service")), string(get(n, "method"))));
            }
        }
        Object r = get(m, "retry");
        Object h = get(m, "hedging");
        return new MethodProperties(names, (Boolean) get(m, "waitForReady"), duration(get(m, "timeout")),
                size(get(m, "maxRequestMessage")), size(get(m, "maxResponseMessage")),
                r == null ? null : retry(r),
                h == null ? null : new HedgingProperties(integer(get(h, "maxAttempts")), duration(get(h, "delay")),
                        codes(get(h, "nonFatalStatusCodes"))));
    }

    /** Every field of the table that the bound object sets, by property name. */
    private RetryProperties retry(Object r) {
        Map<String, @Nullable Object> set = new LinkedHashMap<>();
        for (RetryPolicyField f : RetryPolicyField.values()) {
            Object v = get(r, f.javaName());
            if (v != null) {
                set.put(f.propertyName(), v);
            }
        }
        return RetryProperties.of(set);
    }

    private @Nullable Size size(@Nullable Object v) {
        if (v == null) {
            return null;
        }
        if (v instanceof Number n) {
            return new Size(n.longValue(), n.toString());
        }
        return values.size(v);
    }

    private static @Nullable Integer integer(@Nullable Object v) {
        return v == null ? null : (Integer) RetryPolicyField.Kind.INTEGER.fromProperty(v);
    }

    private static @Nullable Double number(@Nullable Object v) {
        return v == null ? null : (Double) RetryPolicyField.Kind.NUMBER.fromProperty(v);
    }

    private static @Nullable Duration duration(@Nullable Object v) {
        return v == null ? null : (Duration) RetryPolicyField.Kind.DURATION.fromProperty(v);
    }

    @SuppressWarnings("unchecked")
    private static @Nullable List<String> codes(@Nullable Object v) {
        return v == null ? null : (List<String>) RetryPolicyField.Kind.CODES.fromProperty(v);
    }

    private static @Nullable String string(@Nullable Object v) {
        return v == null ? null : v.toString();
    }

    private static @Nullable List<?> list(@Nullable Object v) {
        if (v == null || v instanceof List<?>) {
            return (List<?>) v;
        }
        if (v instanceof Iterable<?> it) {
            List<Object> out = new ArrayList<>();
            it.forEach(out::add);
            return out;
        }
        throw new IllegalArgumentException("not a list: " + v.getClass().getName());
    }

    /** The value of property {@code name} of {@code bean}: its record accessor, getter or is-getter. */
    private @Nullable Object get(Object bean, String name) {
        Class<?> type = bean.getClass();
        Optional<Method> accessor = ACCESSORS.computeIfAbsent(type, t -> new ConcurrentHashMap<>())
                .computeIfAbsent(name, n -> find(type, n));
        if (accessor.isEmpty()) {
            if (strict) {
                throw new IllegalStateException(type.getName() + " has no accessor for the property " + name + " (" + name
                        + "() or get" + capitalized(name) + "()): every bound property class of grpc.retry.clients must"
                        + " have one for each field retry-core maps");
            }
            return null;
        }
        try {
            return accessor.get().invoke(bean);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot read " + name + " of " + type.getName(), e);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("reading " + name + " of " + type.getName() + " failed", e.getCause());
        }
    }

    private static Optional<Method> find(Class<?> type, String name) {
        for (String candidate : List.of(name, "get" + capitalized(name), "is" + capitalized(name))) {
            try {
                Method m = type.getMethod(candidate);
                if (!Modifier.isStatic(m.getModifiers()) && m.getReturnType() != void.class) {
                    return Optional.of(m);
                }
            } catch (NoSuchMethodException e) {
                // try the next form
            }
        }
        return Optional.empty();
    }

    private static String capitalized(String name) {
        return name.substring(0, 1).toUpperCase(Locale.ROOT) + name.substring(1);
    }
}
