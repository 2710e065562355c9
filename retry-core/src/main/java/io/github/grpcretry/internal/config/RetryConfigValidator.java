package io.github.grpcretry.internal.config;

import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.internal.time.Durations;
import io.github.grpcretry.policy.HedgingPolicy;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.policy.ServiceConfigCustomizer;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Checks every rule of gRFC A6 and of the starter's property contract for service configs, turning drafts
 * into the validated policy records (the channel-wide settings are checked by the rules of their own field
 * table, {@code RetryConfigResolver.ChannelField}, which report here). Problems are collected (never thrown here) so a start-up reports all of
 * them at once.
 *
 * <p>The rules:
 * <ul>
 *   <li>method entry: at least one name; a name with a method also names its service; no two
 *       entries of one channel share a name; timeout &gt; 0; message limits in (0, 2^31-1] bytes;
 *       not both a retry and a hedging policy;</li>
 *   <li>retry: the rules of each field of {@link RetryPolicyField} (max-attempts &ge; 2, positive
 *       backoffs and multiplier, retryable codes non-empty and never OK, ...);</li>
 *   <li>hedging: max-attempts &ge; 2 (required), delay &ge; 0 (default 0), non-fatal codes known;</li>
 *   <li>retrythrottling: max-tokens in (0, 1000] and token-ratio &gt; 0 with three decimals kept
 *       (so &ge; 0.001), both required.</li>
 * </ul>
 */
public final class RetryConfigValidator {

    /** Largest message limit grpc-java accepts (an int). */
    public static final long MAX_MESSAGE_BYTES = Integer.MAX_VALUE;
    public static final double MAX_TOKENS_LIMIT = RetryThrottlingPolicy.MAX_TOKENS_LIMIT;
    /** The longest duration accepted anywhere: {@link Durations#MAX}. */
    private static final Duration MAX_DURATION = Durations.MAX;
    private static final String TOO_LONG = "must be at most 9223372036.854775807s (about 292 years, the longest"
            + " duration in nanoseconds)";

    private final List<ConfigProblem> problems;
    private final List<String> warnings;

    public RetryConfigValidator(List<ConfigProblem> problems) {
        this(problems, new ArrayList<>());
    }

    /**
     * @param warnings receives the values that are valid alone but make little sense together (a max-backoff
     *     below the initial backoff, a bucket that lets no retry through, a per-call buffer above the channel's)
     */
    public RetryConfigValidator(List<ConfigProblem> problems, List<String> warnings) {
        this.problems = problems;
        this.warnings = warnings;
    }

    // ---------------------------------------------------------------- service config drafts

    /**
     * Validates {@code draft} and returns the service config it describes (entries with problems are
     * left out; the caller throws when problems were found).
     *
     * @param maxAttemptsPaths when not null, receives for each retry and hedging policy made the path
     *     of its max-attempts (identity keys), so a capped value can be named later
     */
    public ServiceConfig serviceConfig(ServiceConfigDraft draft, @Nullable Map<Object, String> maxAttemptsPaths) {
        List<MethodConfig> out = new ArrayList<>();
        Map<MethodName, String> seen = new HashMap<>();
        for (MethodConfigDraft m : draft.methodConfigs()) {
            MethodConfig mc = methodConfig(m, seen, maxAttemptsPaths);
            if (mc != null) {
                out.add(mc);
            }
        }
        RetryThrottlingDraft throttlingDraft = draft.retryThrottling();
        RetryThrottlingPolicy throttling = throttlingDraft == null ? null : throttling(throttlingDraft);
        return new ServiceConfig(out, throttling);
    }

    private @Nullable MethodConfig methodConfig(MethodConfigDraft d, Map<MethodName, String> seen,
            @Nullable Map<Object, String> paths) {
        int before = problems.size();
        List<MethodName> names = new ArrayList<>();
        if (d.names().isEmpty()) {
            problem(d.field("name"), null, "a method entry needs at least one name",
                    d.naming() == ConfigNaming.JSON
                            ? "add \"name\": [{\"service\": \"pkg.Service\"}] (or [{}] for every method of the channel)"
                            : "add " + d.field("name") + "[0].service (leave the name out for every method)");
        }
        for (Sourced<MethodName> n : d.names()) {
            MethodName name = n.value();
            if (name.service() == null && name.method() != null) {
                problem(n.path(), n.display(), "a name with a method must also name its service",
                        "set the fully-qualified service (e.g. shop.Inventory) next to method " + name.method());
                continue;
            }
            String previous = seen.putIfAbsent(name, n.path());
            if (previous != null) {
                problem(n.path(), name.toString(), "duplicate method name in one channel (also at " + previous + ")",
                        "keep one entry per name: merge the two entries or remove one");
                continue;
            }
            names.add(name);
        }
        Boolean waitForReady = Sourced.valueOf(d.waitForReady());
        Duration timeout = positive(d.timeout(), "a default deadline must be > 0");
        Long maxReq = messageLimit(d.maxRequestMessageBytes());
        Long maxResp = messageLimit(d.maxResponseMessageBytes());
        RetryPolicy retry = null;
        HedgingPolicy hedging = null;
        RetryPolicyField.Draft retryDraft = d.retryPolicy();
        HedgingPolicyDraft hedgingDraft = d.hedgingPolicy();
        boolean hasRetry = retryDraft != null && !retryDraft.isEmpty();
        boolean hasHedging = hedgingDraft != null && !hedgingDraft.isEmpty();
        if (hasRetry && hasHedging) {
            problem(d.path(), null, "a method entry may have a retry policy or a hedging policy, not both",
                    "remove " + d.field("retryPolicy") + " or " + d.field("hedgingPolicy"));
        } else if (hasRetry && retryDraft != null) {
            retry = retryPolicy(retryDraft);
            Sourced<Integer> max = retryDraft.maxAttempts();
            if (retry != null && paths != null && max != null) {
                paths.put(retry, max.path());
            }
        } else if (hasHedging && hedgingDraft != null) {
            hedging = hedgingPolicy(hedgingDraft);
            Sourced<Integer> max = hedgingDraft.maxAttempts();
            if (hedging != null && paths != null && max != null) {
                paths.put(hedging, max.path());
            }
        }
        if (problems.size() != before) {
            return null;
        }
        return new MethodConfig(names, waitForReady, timeout, maxReq, maxResp, retry, hedging);
    }

    private @Nullable Long messageLimit(@Nullable Sourced<Long> s) {
        if (s == null) {
            return null;
        }
        if (s.value() <= 0 || s.value() > MAX_MESSAGE_BYTES) {
            problem(s.path(), s.display(), "a message size limit must be in (0, 2147483647] bytes",
                    "use a positive size below 2GB, e.g. 4MB");
            return null;
        }
        return s.value();
    }

    private @Nullable RetryPolicy retryPolicy(RetryPolicyField.Draft d) {
        int before = problems.size();
        Map<RetryPolicyField, Object> values = new EnumMap<>(RetryPolicyField.class);
        for (RetryPolicyField f : RetryPolicyField.values()) {
            Object v = f.validate(f.drafted(d), d.field(f.jsonName()), this);
            if (v != null) {
                values.put(f, v);
            }
        }
        if (problems.size() != before) {
            return null;
        }
        Sourced<Duration> initial = d.initialBackoff();
        Sourced<Duration> max = d.maxBackoff();
        if (initial != null && max != null && values.get(RetryPolicyField.MAX_BACKOFF) instanceof Duration m
                && values.get(RetryPolicyField.INITIAL_BACKOFF) instanceof Duration i && m.compareTo(i) < 0) {
            warnings.add(max.path() + " = " + max.display() + " is below " + initial.path() + " = " + initial.display()
                    + ": every backoff is capped at max-backoff, so each retry waits at most " + max.display()
                    + " (initial-backoff and backoff-multiplier have no effect); raise max-backoff or lower initial-backoff");
        }
        return RetryPolicyField.build(values);
    }

    private @Nullable HedgingPolicy hedgingPolicy(HedgingPolicyDraft d) {
        int before = problems.size();
        Integer maxAttempts = maxAttempts(d.maxAttempts(), d.field("maxAttempts"), "hedging");
        Duration delay = Duration.ZERO;
        if (d.hedgingDelay() != null) {
            delay = d.hedgingDelay().value();
            if (delay.isNegative()) {
                problem(d.hedgingDelay().path(), d.hedgingDelay().display(), "the hedging delay must be >= 0",
                        "use 0 to send all attempts at once, or a positive delay such as 0.1s");
            } else if (delay.compareTo(MAX_DURATION) > 0) {
                problem(d.hedgingDelay().path(), d.hedgingDelay().display(), "the hedging delay " + TOO_LONG,
                        "use a delay such as 0.1s");
            }
        }
        Set<Status.Code> codes = Set.of();
        if (d.nonFatalStatusCodes() != null) {
            Sourced<List<String>> s = d.nonFatalStatusCodes();
            codes = StatusCodes.parseAll(s.value(), s.path(), problems);
            if (codes.contains(Status.Code.OK)) {
                problem(s.path(), s.display(), "OK is never a failure, so it cannot be a non-fatal status code",
                        "remove OK from the list");
            }
        }
        if (maxAttempts == null || problems.size() != before) {
            return null;
        }
        return new HedgingPolicy(maxAttempts, delay, codes);
    }

    @Nullable Integer maxAttempts(@Nullable Sourced<Integer> s, String path, String what) {
        if (s == null) {
            missing(path, "the number of attempts in all, the first included", "e.g. 3");
            return null;
        }
        if (s.value() < 2) {
            problem(s.path(), s.display(), "max-attempts of a " + what + " policy must be >= 2 (the first attempt counts)",
                    "use 2 or more, or remove the " + what + " policy to make one attempt only");
            return null;
        }
        return s.value();
    }

    private @Nullable RetryThrottlingPolicy throttling(RetryThrottlingDraft d) {
        int before = problems.size();
        Sourced<Double> maxTokens = d.maxTokens();
        Sourced<Double> tokenRatio = d.tokenRatio();
        if (d.maxTokens() == null) {
            missing(d.field("maxTokens"), "the size of the token bucket", "e.g. 10");
        } else {
            double v = d.maxTokens().value();
            if (!(v > 0) || v > MAX_TOKENS_LIMIT) {
                problem(d.maxTokens().path(), d.maxTokens().display(), "max-tokens must be in (0, 1000]",
                        "use a number above 0 and at most 1000, e.g. 10");
            } else if (Math.round(v * 1000) < 1) {
                // the throttle keeps thousandths: a smaller bucket would hold no token at all
                problem(d.maxTokens().path(), d.maxTokens().display(),
                        "max-tokens must be in (0, 1000] (three decimals are kept, so at least 0.001)",
                        "use a number such as 10");
            }
        }
        if (d.tokenRatio() == null) {
            missing(d.field("tokenRatio"), "the tokens a successful call gives back", "e.g. 0.1");
        } else {
            double v = d.tokenRatio().value();
            if (!(v > 0) || Double.isInfinite(v) || Math.round(v * 1000) < 1) {
                problem(d.tokenRatio().path(), d.tokenRatio().display(),
                        "token-ratio must be > 0 (three decimals are kept, so at least 0.001)",
                        "use a positive ratio such as 0.1");
            }
        }
        if (maxTokens == null || tokenRatio == null || problems.size() != before) {
            return null;
        }
        if (maxTokens.value() <= 2) {
            // A6: a retry passes only while the token count is above max-tokens / 2, and the failure before
            // it took a whole token: max - 1 > max / 2 only for max > 2.
            warnings.add(maxTokens.path() + " = " + maxTokens.display() + " lets no retry through: A6's throttle allows"
                    + " a retry only while the token count is above max-tokens / 2, and the failed attempt before it"
                    + " takes one token, which leaves at most max-tokens / 2 when max-tokens is 2 or less; use a bucket"
                    + " above 2 (e.g. 10), or max-attempts-cap: 1 to turn retries off");
        }
        return new RetryThrottlingPolicy(maxTokens.value(), tokenRatio.value());
    }

    /** The warnings found so far (see {@link #RetryConfigValidator(List, List)}). */
    public List<String> warnings() {
        return warnings;
    }

    // ---------------------------------------------------------------- validated model (customizer output)

    /**
     * Checks a service config made in code (a {@link ServiceConfigCustomizer}'s result) against the
     * same rules; problems are named {@code <origin> methodConfig[i]...}.
     */
    public void check(@Nullable ServiceConfig config, String origin) {
        if (config == null) {
            problem(origin, null, "a ServiceConfigCustomizer must not return null", "return the config it was given");
            return;
        }
        Map<MethodName, String> seen = new HashMap<>();
        for (int i = 0; i < config.methodConfigs().size(); i++) {
            MethodConfig mc = config.methodConfigs().get(i);
            String p = origin + " methodConfig[" + i + "]";
            if (mc.names().isEmpty()) {
                problem(p + ".name", "[]", "a method entry needs at least one name", "add a MethodName (MethodName.DEFAULT for every method)");
            }
            for (int j = 0; j < mc.names().size(); j++) {
                MethodName n = mc.names().get(j);
                if (n.service() == null && n.method() != null) {
                    problem(p + ".name[" + j + "]", n.toString(), "a name with a method must also name its service",
                            "set the service");
                }
                String prev = seen.putIfAbsent(n, p + ".name[" + j + "]");
                if (prev != null) {
                    problem(p + ".name[" + j + "]", n.toString(), "duplicate method name in one channel (also at " + prev + ")",
                            "keep one entry per name");
                }
            }
            if (mc.timeout() != null && (mc.timeout().isNegative() || mc.timeout().isZero())) {
                problem(p + ".timeout", Sourced.display(mc.timeout()), "a default deadline must be > 0", "use a positive duration");
            }
            tooLong(mc.timeout(), p + ".timeout");
            checkLimit(mc.maxRequestMessageBytes(), p + ".maxRequestMessageBytes");
            checkLimit(mc.maxResponseMessageBytes(), p + ".maxResponseMessageBytes");
            if (mc.retryPolicy() != null && mc.hedgingPolicy() != null) {
                problem(p, null, "a method entry may have a retry policy or a hedging policy, not both", "drop one");
            }
            // What the records check themselves (positive backoffs and multiplier, codes without OK, a
            // positive per-attempt timeout, a non-negative hedging delay, the throttling ranges) cannot be
            // wrong here; what is left are the configuration rules on top of them.
            RetryPolicy r = mc.retryPolicy();
            if (r != null) {
                for (RetryPolicyField f : RetryPolicyField.values()) {
                    Object v = f.value(r);
                    if (v != null) {
                        f.checkBuilt(v, p + ".retryPolicy." + f.jsonName(), this);
                    }
                }
            }
            HedgingPolicy h = mc.hedgingPolicy();
            if (h != null) {
                if (h.maxAttempts() < 2) {
                    problem(p + ".hedgingPolicy.maxAttempts", String.valueOf(h.maxAttempts()), "max-attempts must be >= 2", "use 2 or more");
                }
                tooLong(h.hedgingDelay(), p + ".hedgingPolicy.hedgingDelay");
            }
        }
    }

    void tooLong(@Nullable Duration d, String path) {
        if (d != null && d.compareTo(MAX_DURATION) > 0) {
            problem(path, Sourced.display(d), TOO_LONG, "use a shorter duration");
        }
    }

    private void checkLimit(@Nullable Long v, String path) {
        if (v != null && (v <= 0 || v > MAX_MESSAGE_BYTES)) {
            problem(path, String.valueOf(v), "a message size limit must be in (0, 2147483647] bytes", "use e.g. 4MB");
        }
    }

    // ---------------------------------------------------------------- helpers

    /** A required duration that must be &gt; 0 (and at most {@link Durations#MAX}). */
    @Nullable Duration requiredPositive(@Nullable Sourced<Duration> s, String path, String what, String example,
            String rule) {
        if (s == null) {
            missing(path, what, example);
            return null;
        }
        return positive(s, rule);
    }

    /** Parses configured status codes (names in any case or numbers), reporting unknown ones. */
    Set<Status.Code> codes(Sourced<List<String>> s) {
        return StatusCodes.parseAll(s.value(), s.path(), problems);
    }

    @Nullable Duration positive(@Nullable Sourced<Duration> s, String rule) {
        if (s == null) {
            return null;
        }
        if (s.value().isNegative() || s.value().isZero()) {
            problem(s.path(), s.display(), rule, "use a positive duration such as 100ms (JSON: \"0.1s\")");
            return null;
        }
        if (s.value().compareTo(MAX_DURATION) > 0) {
            problem(s.path(), s.display(), s.path().substring(s.path().lastIndexOf('.') + 1) + " " + TOO_LONG,
                    "use a shorter duration such as 100ms (JSON: \"0.1s\")");
            return null;
        }
        return s.value();
    }

    void missing(String path, String what, String example) {
        problem(path, null, "required: " + what, "set it, " + example);
    }

    /** Reports a problem: the value at {@code path} breaks {@code rule}; {@code fix} says what to do. */
    public void problem(String path, @Nullable String value, String rule, String fix) {
        problems.add(new ConfigProblem(path, value, rule, fix));
    }
}
