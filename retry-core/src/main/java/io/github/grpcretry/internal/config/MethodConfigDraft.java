package io.github.grpcretry.internal.config;

import io.github.grpcretry.policy.MethodName;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * One {@code methodConfig} entry as configured, not yet validated.
 *
 * @param path the entry's path ({@code ...service-config.method[0]} or {@code <file> $.methodConfig[0]})
 * @param names the name matchers, each with its path; an empty list is reported as a problem
 */
public record MethodConfigDraft(
        String path,
        ConfigNaming naming,
        List<Sourced<MethodName>> names,
        @Nullable Sourced<Boolean> waitForReady,
        @Nullable Sourced<Duration> timeout,
        @Nullable Sourced<Long> maxRequestMessageBytes,
        @Nullable Sourced<Long> maxResponseMessageBytes,
        RetryPolicyField.@Nullable Draft retryPolicy,
        @Nullable HedgingPolicyDraft hedgingPolicy) {

    public MethodConfigDraft {
        names = List.copyOf(names);
    }

    /** The set of names, for matching a typed entry to a file entry. */
    public Set<MethodName> nameSet() {
        Set<MethodName> set = new HashSet<>();
        for (Sourced<MethodName> n : names) {
            set.add(n.value());
        }
        return set;
    }

    /**
     * This entry laid over {@code under} (an entry with the same set of names): every field this
     * entry sets wins, retry and hedging sub-fields included; the rest comes from {@code under}.
     */
    public MethodConfigDraft overlay(MethodConfigDraft under) {
        RetryPolicyField.Draft r = retryPolicy == null ? under.retryPolicy : retryPolicy.overlay(under.retryPolicy);
        HedgingPolicyDraft h = hedgingPolicy == null ? under.hedgingPolicy : hedgingPolicy.overlay(under.hedgingPolicy);
        return new MethodConfigDraft(path, naming, names,
                Sourced.firstSet(waitForReady, under.waitForReady),
                Sourced.firstSet(timeout, under.timeout),
                Sourced.firstSet(maxRequestMessageBytes, under.maxRequestMessageBytes),
                Sourced.firstSet(maxResponseMessageBytes, under.maxResponseMessageBytes),
                r, h);
    }

    String field(String jsonName) {
        return naming.child(path, jsonName);
    }
}
