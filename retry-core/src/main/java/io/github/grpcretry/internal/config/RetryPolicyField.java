package io.github.grpcretry.internal.config;

import io.github.grpcretry.internal.time.Durations;
import io.github.grpcretry.policy.RetryPolicy;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The field table of {@code retryPolicy}: for each field its gRPC service-config JSON name, its property
 * name (under {@code ...service-config.method[i].retry}), its Java name (the record component of
 * {@link RetryPolicy} and the getter or accessor of the bound property classes of both Spring Boot
 * lines), its kind, its rules and its accessors. One table drives the typed draft and its overlay
 * ({@link Draft}), the JSON reader ({@link ServiceConfigJson}), the validator
 * ({@link RetryConfigValidator}: the configured values and a customizer's result), the property names of
 * problems ({@link ConfigNaming}), the endpoint's rendering and the mapping of the bound property
 * classes of both lines (retry-core's {@code integration} package). docs/design.md ("Adding a
 * retry-policy field") lists what a new field needs.
 *
 * <p>The order of the constants is the order of the fields in the JSON a channel gets, in the endpoint
 * and in the problem report.
 */
public enum RetryPolicyField {

    /** Attempts in all, the first included: required, at least 2 as configured. */
    MAX_ATTEMPTS("maxAttempts", "max-attempts", Kind.INTEGER) {
        @Override
        @Nullable Object validate(@Nullable Sourced<?> s, String path, RetryConfigValidator v) {
            return v.maxAttempts(cast(s), path, "retry");
        }

        @Override
        void checkBuilt(Object value, String path, RetryConfigValidator v) {
            if ((Integer) value < 2) {
                v.problem(path, String.valueOf(value), "max-attempts must be >= 2", "use 2 or more");
            }
        }
    },

    /** The backoff before the first retry: required, &gt; 0. */
    INITIAL_BACKOFF("initialBackoff", "initial-backoff", Kind.DURATION) {
        @Override
        @Nullable Object validate(@Nullable Sourced<?> s, String path, RetryConfigValidator v) {
            return v.requiredPositive(cast(s), path, "the delay before the first retry", "e.g. 0.1s", mustBePositive());
        }
    },

    /** The longest backoff: required, &gt; 0. */
    MAX_BACKOFF("maxBackoff", "max-backoff", Kind.DURATION) {
        @Override
        @Nullable Object validate(@Nullable Sourced<?> s, String path, RetryConfigValidator v) {
            return v.requiredPositive(cast(s), path, "the longest delay between attempts", "e.g. 1s", mustBePositive());
        }
    },

    /** The growth of the backoff per retry: required, finite and &gt; 0. */
    BACKOFF_MULTIPLIER("backoffMultiplier", "backoff-multiplier", Kind.NUMBER) {
        @Override
        @Nullable Object validate(@Nullable Sourced<?> s, String path, RetryConfigValidator v) {
            if (s == null) {
                v.missing(path, "the factor by which the backoff grows", "e.g. 2");
                return null;
            }
            double m = (Double) s.value();
            if (!(m > 0) || Double.isInfinite(m)) {
                v.problem(s.path(), s.display(), propertyName() + " must be > 0 and finite",
                        "use a positive factor such as 2 (1 keeps the backoff constant)");
                return null;
            }
            return m;
        }

        @Override
        void checkBuilt(Object value, String path, RetryConfigValidator v) {
            double m = (Double) value;
            if (Double.isInfinite(m) || Double.isNaN(m)) {
                v.problem(path, String.valueOf(m), mustBePositive(), "use e.g. 2");
            }
        }
    },

    /** The status codes that are retried: required, not empty, known codes, never OK. */
    RETRYABLE_STATUS_CODES("retryableStatusCodes", "retryable-status-codes", Kind.CODES) {
        @Override
        @Nullable Object validate(@Nullable Sourced<?> s, String path, RetryConfigValidator v) {
            if (s == null) {
                v.missing(path, "the status codes that may be retried", "e.g. [UNAVAILABLE]");
                return null;
            }
            @SuppressWarnings("unchecked")
            Sourced<List<String>> codes = (Sourced<List<String>>) s;
            Set<Status.Code> parsed = v.codes(codes);
            if (codes.value().isEmpty()) {
                v.problem(s.path(), s.display(), propertyName() + " must not be empty",
                        "list at least one code, e.g. UNAVAILABLE");
            } else if (parsed.contains(Status.Code.OK)) {
                v.problem(s.path(), s.display(), "OK can never be retried", "remove OK from the list");
            }
            return parsed;
        }
    },

    /** A limit on the wait for one attempt's response: optional, &gt; 0 when set. */
    PER_ATTEMPT_RECEIVE_TIMEOUT("perAttemptRecvTimeout", "per-attempt-receive-timeout", Kind.DURATION) {
        @Override
        @Nullable Object validate(@Nullable Sourced<?> s, String path, RetryConfigValidator v) {
            return v.positive(cast(s), mustBePositive());
        }
    };

    private final String jsonName;
    private final String propertyName;
    private final String javaName;
    private final Kind kind;

    RetryPolicyField(String jsonName, String propertyName, Kind kind) {
        this.jsonName = jsonName;
        this.propertyName = propertyName;
        this.javaName = camelCase(propertyName);
        this.kind = kind;
    }

    /**
     * A {@code retryPolicy} as configured, not yet validated: each field of the table with where it was set (null:
     * not set), in its type. Both inputs land here: the bound properties ({@code RetryConfigResolver}, one argument per
     * field) and the service-config JSON ({@link ServiceConfigJson}, each field read by its kind).
     *
     * @param path the path of the policy object ({@code ...method[0].retry} or {@code ... $.methodConfig[0].retryPolicy})
     */
    public record Draft(
            String path,
            ConfigNaming naming,
            @Nullable Sourced<Integer> maxAttempts,
            @Nullable Sourced<Duration> initialBackoff,
            @Nullable Sourced<Duration> maxBackoff,
            @Nullable Sourced<Double> backoffMultiplier,
            @Nullable Sourced<List<String>> retryableStatusCodes,
            @Nullable Sourced<Duration> perAttemptReceiveTimeout) {

        public Draft {
            Objects.requireNonNull(path, "path");
            Objects.requireNonNull(naming, "naming");
        }

        /** A draft of the values read field by field. The one place that lists the draft's fields in order. */
        static Draft of(String path, ConfigNaming naming, Map<RetryPolicyField, Sourced<?>> v) {
            return new Draft(path, naming, cast(v.get(MAX_ATTEMPTS)), cast(v.get(INITIAL_BACKOFF)), cast(v.get(MAX_BACKOFF)),
                    cast(v.get(BACKOFF_MULTIPLIER)), cast(v.get(RETRYABLE_STATUS_CODES)),
                    cast(v.get(PER_ATTEMPT_RECEIVE_TIMEOUT)));
        }

        /** Whether no field is set. */
        public boolean isEmpty() {
            for (RetryPolicyField f : values()) {
                if (f.drafted(this) != null) {
                    return false;
                }
            }
            return true;
        }

        /** This draft's fields where set, {@code under}'s elsewhere; this draft's path and naming. */
        public Draft overlay(@Nullable Draft under) {
            if (under == null) {
                return this;
            }
            Map<RetryPolicyField, Sourced<?>> merged = new EnumMap<>(RetryPolicyField.class);
            for (RetryPolicyField f : values()) {
                Sourced<?> own = f.drafted(this);
                Sourced<?> s = own != null ? own : f.drafted(under);
                if (s != null) {
                    merged.put(f, s);
                }
            }
            return of(path, naming, merged);
        }

        String field(String jsonName) {
            return naming.child(path, jsonName);
        }
    }

    /**
     * A {@link RetryPolicy} of validated values (every required field present: the validator reported
     * the missing ones and returned no policy). The one place that lists the record's components in order.
     */
    static RetryPolicy build(Map<RetryPolicyField, Object> v) {
        return new RetryPolicy(
                required(v, MAX_ATTEMPTS, Integer.class),
                required(v, INITIAL_BACKOFF, Duration.class),
                required(v, MAX_BACKOFF, Duration.class),
                required(v, BACKOFF_MULTIPLIER, Double.class),
                codeSet(required(v, RETRYABLE_STATUS_CODES, Set.class)),
                (Duration) v.get(PER_ATTEMPT_RECEIVE_TIMEOUT));
    }

    private static <T> T required(Map<RetryPolicyField, Object> v, RetryPolicyField field, Class<T> type) {
        return type.cast(Objects.requireNonNull(v.get(field), field.jsonName));
    }

    /** The field's name in the gRPC service-config JSON ({@code perAttemptRecvTimeout}). */
    public String jsonName() {
        return jsonName;
    }

    /** The field's property name, kebab case ({@code per-attempt-receive-timeout}). */
    public String propertyName() {
        return propertyName;
    }

    /**
     * The field's Java name ({@code perAttemptReceiveTimeout}): the property name in camel case, the
     * {@link RetryPolicy} record component, the accessor or getter of the bound property classes and
     * the key of the endpoint's rendering.
     */
    public String javaName() {
        return javaName;
    }

    public Kind kind() {
        return kind;
    }

    /*
     * The two accessors below are switches rather than a lambda per constant, so that loading the table
     * spins no lambda classes at start-up (docs/benchmarks.md); a new field adds a case to each.
     */

    /** The field's value in {@code draft} and where it was set; null when it is not set. */
    public @Nullable Sourced<?> drafted(Draft draft) {
        return switch (this) {
            case MAX_ATTEMPTS -> draft.maxAttempts();
            case INITIAL_BACKOFF -> draft.initialBackoff();
            case MAX_BACKOFF -> draft.maxBackoff();
            case BACKOFF_MULTIPLIER -> draft.backoffMultiplier();
            case RETRYABLE_STATUS_CODES -> draft.retryableStatusCodes();
            case PER_ATTEMPT_RECEIVE_TIMEOUT -> draft.perAttemptReceiveTimeout();
        };
    }

    /** The field's value in {@code policy}; null when an optional field is not set. */
    public @Nullable Object value(RetryPolicy policy) {
        return switch (this) {
            case MAX_ATTEMPTS -> policy.maxAttempts();
            case INITIAL_BACKOFF -> policy.initialBackoff();
            case MAX_BACKOFF -> policy.maxBackoff();
            case BACKOFF_MULTIPLIER -> policy.backoffMultiplier();
            case RETRYABLE_STATUS_CODES -> policy.retryableStatusCodes();
            case PER_ATTEMPT_RECEIVE_TIMEOUT -> policy.perAttemptReceiveTimeout();
        };
    }

    /** The field of this property name, or null. */
    public static @Nullable RetryPolicyField byPropertyName(String propertyName) {
        for (RetryPolicyField f : values()) {
            if (f.propertyName.equals(propertyName)) {
                return f;
            }
        }
        return null;
    }

    /**
     * Checks the configured value {@code s} (null when not set), reporting problems to {@code v};
     * returns the validated value, or null (not set, or a problem was reported).
     *
     * @param path the field's path, for a problem with a missing value
     */
    abstract @Nullable Object validate(@Nullable Sourced<?> s, String path, RetryConfigValidator v);

    /**
     * Checks a value of a policy built in code (a customizer's result) against the configuration rules
     * the record does not check itself. By default: a duration of at most {@link Durations#MAX}.
     */
    void checkBuilt(Object value, String path, RetryConfigValidator v) {
        if (kind == Kind.DURATION) {
            v.tooLong((Duration) value, path);
        }
    }

    String mustBePositive() {
        return propertyName + " must be > 0";
    }

    @SuppressWarnings("unchecked")
    private static <T> @Nullable Sourced<T> cast(@Nullable Sourced<?> s) {
        return (Sourced<T>) s;
    }

    @SuppressWarnings("unchecked")
    private static Set<Status.Code> codeSet(Set<?> codes) {
        return (Set<Status.Code>) codes;
    }

    private static String camelCase(String kebab) {
        StringBuilder out = new StringBuilder(kebab.length());
        boolean upper = false;
        for (char c : kebab.toCharArray()) {
            if (c == '-') {
                upper = true;
            } else {
                out.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            }
        }
        return out.toString();
    }

    /**
     * How a field's value is read from bound properties and shown by the endpoint. The JSON reader reads
     * each kind with its own type checks; {@link RetryPolicy#toServiceConfigMap()} writes it for grpc-java.
     */
    public enum Kind {
        /** A whole number ({@code Integer}). */
        INTEGER,
        /** A decimal number ({@code Double}). */
        NUMBER,
        /** A {@link Duration}: protobuf JSON ({@code "0.1s"}) in a service config, ISO-8601 in the endpoint. */
        DURATION,
        /** Status codes: names or numbers as configured, a set of {@link Status.Code} when validated. */
        CODES;

        /**
         * A bound property value in the draft's type: a whole number as {@code Integer}, a number as
         * {@code Double} (a {@code Float} as the decimal written, 0.1 rather than 0.10000000149), a
         * duration as is, status codes as their names ({@code Status.Code} values) or as written.
         *
         * @throws IllegalArgumentException when the value is not of the kind
         */
        public Object fromProperty(Object value) {
            switch (this) {
                case INTEGER:
                    if (value instanceof Integer || value instanceof Short || value instanceof Byte) {
                        return ((Number) value).intValue();
                    }
                    break;
                case NUMBER:
                    if (value instanceof Float f) {
                        return Double.valueOf(Float.toString(f));
                    }
                    if (value instanceof Number n) {
                        return n.doubleValue();
                    }
                    break;
                case DURATION:
                    if (value instanceof Duration) {
                        return value;
                    }
                    break;
                case CODES:
                    if (value instanceof Collection<?> c) {
                        List<String> out = new ArrayList<>(c.size());
                        for (Object code : c) {
                            out.add(code instanceof Enum<?> e ? e.name() : String.valueOf(code));
                        }
                        return out;
                    }
                    break;
                default:
                    break;
            }
            throw new IllegalArgumentException("not a " + name().toLowerCase(Locale.ROOT) + " value: " + value
                    + " (" + value.getClass().getName() + ")");
        }

        /** A validated value as the endpoint shows it (durations as users write them, {@code 50ms}; codes by name). */
        public Object toReport(Object value) {
            return switch (this) {
                case INTEGER, NUMBER -> value;
                case DURATION -> Durations.toText((Duration) value);
                case CODES -> codeNames(value);
            };
        }

        private static List<Object> codeNames(Object codes) {
            List<Object> out = new ArrayList<>();
            for (Object c : (Collection<?>) codes) {
                out.add(((Status.Code) c).name());
            }
            return out;
        }
    }
}
