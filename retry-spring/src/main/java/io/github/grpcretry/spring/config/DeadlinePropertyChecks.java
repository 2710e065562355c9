package io.github.grpcretry.spring.config;

import io.github.grpcretry.config.RetryConfigResolver;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The rules of the {@code grpc.retry.deadline.*} properties, shared by both Spring Boot lines: every
 * broken rule is one {@link ConfigProblem} with its property path, the value as written, the rule and
 * the fix, so all of them are reported together.
 */
public final class DeadlinePropertyChecks {

    /** The properties' prefix. */
    public static final String PREFIX = "grpc.retry.deadline.";

    private DeadlinePropertyChecks() {
    }

    /**
     * The same rules as {@link #problems}, for the bean that first uses the bound values.
     *
     * @throws InvalidRetryConfigurationException listing every broken rule
     */
    public static void check(@Nullable Duration defaultTimeout, @Nullable Duration reserve,
            @Nullable Duration minRemaining, @Nullable Duration httpMax, @Nullable String httpHeader) {
        List<ConfigProblem> problems = problems(defaultTimeout, reserve, minRemaining, httpMax, httpHeader);
        if (!problems.isEmpty()) {
            throw new InvalidRetryConfigurationException(problems);
        }
    }

    /**
     * @param defaultTimeout {@code default-timeout}, null when unset
     * @param reserve {@code reserve}
     * @param minRemaining {@code min-remaining}
     * @param httpMax {@code http.max}
     * @param httpHeader {@code http.header}, null or empty when HTTP ingress is off
     * @return the broken rules, empty when every value is valid
     */
    public static List<ConfigProblem> problems(@Nullable Duration defaultTimeout, @Nullable Duration reserve,
            @Nullable Duration minRemaining, @Nullable Duration httpMax, @Nullable String httpHeader) {
        List<ConfigProblem> problems = new ArrayList<>();
        boolean defaultOk = fits(problems, "default-timeout", defaultTimeout);
        boolean minOk = fits(problems, "min-remaining", minRemaining);
        boolean reserveOk = fits(problems, "reserve", reserve);
        boolean maxOk = fits(problems, "http.max", httpMax);
        if (defaultOk && defaultTimeout != null && !positive(defaultTimeout)) {
            problems.add(new ConfigProblem(PREFIX + "default-timeout", text(defaultTimeout), "must be > 0",
                    "give a positive duration such as 5s, or remove the property for no default deadline"));
        }
        if (reserveOk && (reserve == null || reserve.isNegative())) {
            problems.add(new ConfigProblem(PREFIX + "reserve", text(reserve), "must be >= 0",
                    "give a non-negative duration such as 20ms (0 = no reserve)"));
        }
        if (minOk && (minRemaining == null || minRemaining.isNegative())) {
            problems.add(new ConfigProblem(PREFIX + "min-remaining", text(minRemaining), "must be >= 0",
                    "give a non-negative duration such as 50ms (0 = off)"));
        } else if (minOk && defaultOk && defaultTimeout != null && positive(defaultTimeout) && minRemaining != null
                && !minRemaining.isZero()
                && defaultTimeout.compareTo(minRemaining) <= 0) {
            problems.add(new ConfigProblem(PREFIX + "default-timeout", text(defaultTimeout),
                    "must be greater than " + PREFIX + "min-remaining (" + text(minRemaining)
                            + "), else every call without a deadline would be refused",
                    "raise default-timeout or lower min-remaining"));
        }
        if (maxOk && (httpMax == null || !positive(httpMax))) {
            problems.add(new ConfigProblem(PREFIX + "http.max", text(httpMax), "must be > 0",
                    "give a positive duration such as 30s"));
        }
        String header = httpHeader == null ? "" : httpHeader.trim();
        for (int i = 0; i < header.length(); i++) {
            if (!isTokenChar(header.charAt(i))) {
                problems.add(new ConfigProblem(PREFIX + "http.header", httpHeader,
                        "must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~)",
                        "give a header name such as X-Request-Timeout-Ms, or leave it empty to turn HTTP ingress off"));
                break;
            }
        }
        return problems;
    }

    private static boolean fits(List<ConfigProblem> problems, String property, @Nullable Duration d) {
        if (d != null && !RetryConfigResolver.fitsInNanos(d)) {
            problems.add(new ConfigProblem(PREFIX + property, text(d),
                    "must be at most 292 years (the longest duration in nanoseconds)", "give a duration such as 5s"));
            return false;
        }
        return true;
    }

    private static String text(@Nullable Duration d) {
        return d == null ? "(none)" : RetryConfigResolver.durationText(d);
    }

    private static boolean positive(Duration d) {
        return !d.isNegative() && !d.isZero();
    }

    private static boolean isTokenChar(char c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
    }
}
