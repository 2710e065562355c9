package io.github.grpcretry.policy;

import io.github.grpcretry.internal.time.Durations;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A channel's service config: method entries and optional retry throttling. Immutable; built and
 * validated by the configuration layer.
 */
public record ServiceConfig(List<MethodConfig> methodConfigs, @Nullable RetryThrottlingPolicy retryThrottling) {

    public static final ServiceConfig EMPTY = new ServiceConfig(List.of(), null);

    public ServiceConfig {
        methodConfigs = List.copyOf(methodConfigs);
    }

    /**
     * This config consulted before {@code defaults} (a channel over GLOBAL): entries of
     * {@code defaults} whose names are shadowed by a name of this config are dropped, so ordinary
     * gRPC matching (exact method, then service, then default) over the result gives this config's
     * entries precedence. Throttling is this config's, else the default's.
     */
    public ServiceConfig layeredOver(@Nullable ServiceConfig defaults) {
        if (defaults == null || defaults.methodConfigs.isEmpty() && defaults.retryThrottling == null) {
            return this;
        }
        List<MethodConfig> merged = new ArrayList<>(methodConfigs);
        for (MethodConfig candidate : defaults.methodConfigs) {
            List<MethodName> kept = new ArrayList<>();
            for (MethodName name : candidate.names()) {
                if (!isShadowed(name)) {
                    kept.add(name);
                }
            }
            if (kept.size() == candidate.names().size()) {
                merged.add(candidate);
            } else if (!kept.isEmpty()) {
                merged.add(candidate.withNames(kept));
            }
        }
        return new ServiceConfig(merged, retryThrottling != null ? retryThrottling : defaults.retryThrottling);
    }

    private boolean isShadowed(MethodName name) {
        for (MethodConfig own : methodConfigs) {
            for (MethodName ownName : own.names()) {
                if (name.isShadowedBy(ownName)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** gRPC matching: the entry naming the exact method, else the whole service, else the default; none when nothing matches. */
    public @Nullable MethodConfig find(@Nullable String fullServiceName, @Nullable String methodName) {
        MethodConfig best = null;
        int bestSpecificity = -1;
        for (MethodConfig mc : methodConfigs) {
            for (MethodName name : mc.names()) {
                if (name.matches(fullServiceName, methodName) && name.specificity() > bestSpecificity) {
                    best = mc;
                    bestSpecificity = name.specificity();
                    if (bestSpecificity == 2) {
                        return best;
                    }
                }
            }
        }
        return best;
    }

    public @Nullable MethodConfig find(MethodDescriptor<?, ?> method) {
        return find(method.getServiceName(), method.getBareMethodName());
    }

    /** Max attempts of every retry and hedging policy limited to {@code cap}. */
    public ServiceConfig capped(int cap) {
        List<MethodConfig> out = new ArrayList<>(methodConfigs.size());
        boolean changed = false;
        for (MethodConfig mc : methodConfigs) {
            MethodConfig c = mc.capped(cap);
            changed |= c != mc;
            out.add(c);
        }
        return changed ? new ServiceConfig(out, retryThrottling) : this;
    }

    /**
     * This config without retry policies, hedging policies and throttling: what grpc-java gets when
     * the interceptor engine retries. Entries left with nothing but names are dropped where that does
     * not change matching (no broader entry with settings would then catch their calls), so grpc-java
     * does not attach empty method settings to every call.
     */
    public ServiceConfig withoutRetry() {
        List<MethodConfig> stripped = new ArrayList<>(methodConfigs.size());
        for (MethodConfig mc : methodConfigs) {
            stripped.add(mc.withoutRetry());
        }
        List<MethodConfig> out = new ArrayList<>(stripped.size());
        for (MethodConfig mc : stripped) {
            if (!isNamesOnly(mc) || shadowsASetting(mc, stripped)) {
                out.add(mc);
            }
        }
        return new ServiceConfig(out, null);
    }

    private static boolean isNamesOnly(MethodConfig mc) {
        return mc.waitForReady() == null && mc.timeout() == null && mc.maxRequestMessageBytes() == null
                && mc.maxResponseMessageBytes() == null && mc.retryPolicy() == null && mc.hedgingPolicy() == null;
    }

    /** Whether some other entry with settings would match calls of {@code candidate} if it were dropped. */
    private static boolean shadowsASetting(MethodConfig candidate, List<MethodConfig> all) {
        for (MethodConfig other : all) {
            if (other == candidate || isNamesOnly(other)) {
                continue;
            }
            for (MethodName mine : candidate.names()) {
                for (MethodName theirs : other.names()) {
                    if (mine.isShadowedBy(theirs)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /**
     * Renders the JSON-shaped map grpc-java's {@code ManagedChannelBuilder.defaultServiceConfig}
     * takes (numbers as {@link Double}, durations as {@code "1.500s"} strings, codes by name).
     *
     * @param includeRetry whether retryPolicy, hedgingPolicy and retryThrottling are rendered
     */
    public Map<String, Object> toServiceConfigMap(boolean includeRetry) {
        Map<String, Object> root = new LinkedHashMap<>();
        List<Object> entries = new ArrayList<>();
        for (MethodConfig mc : methodConfigs) {
            Map<String, Object> entry = new LinkedHashMap<>();
            List<Object> names = new ArrayList<>();
            for (MethodName n : mc.names()) {
                Map<String, Object> name = new LinkedHashMap<>();
                if (n.service() != null) {
                    name.put("service", n.service());
                }
                if (n.method() != null) {
                    name.put("method", n.method());
                }
                names.add(name);
            }
            entry.put("name", names);
            if (mc.waitForReady() != null) {
                entry.put("waitForReady", mc.waitForReady());
            }
            if (mc.timeout() != null) {
                entry.put("timeout", Durations.toJson(mc.timeout()));
            }
            if (mc.maxRequestMessageBytes() != null) {
                entry.put("maxRequestMessageBytes", (double) mc.maxRequestMessageBytes());
            }
            if (mc.maxResponseMessageBytes() != null) {
                entry.put("maxResponseMessageBytes", (double) mc.maxResponseMessageBytes());
            }
            if (includeRetry && mc.retryPolicy() != null) {
                entry.put("retryPolicy", mc.retryPolicy().toServiceConfigMap());
            }
            if (includeRetry && mc.hedgingPolicy() != null) {
                HedgingPolicy h = mc.hedgingPolicy();
                Map<String, Object> hp = new LinkedHashMap<>();
                hp.put("maxAttempts", (double) h.maxAttempts());
                hp.put("hedgingDelay", Durations.toJson(h.hedgingDelay()));
                hp.put("nonFatalStatusCodes", codeNames(h.nonFatalStatusCodes()));
                entry.put("hedgingPolicy", hp);
            }
            entries.add(entry);
        }
        if (!entries.isEmpty()) {
            root.put("methodConfig", entries);
        }
        if (includeRetry && retryThrottling != null) {
            Map<String, Object> t = new LinkedHashMap<>();
            t.put("maxTokens", retryThrottling.maxTokens());
            t.put("tokenRatio", retryThrottling.tokenRatio());
            root.put("retryThrottling", t);
        }
        return root;
    }

    static List<Object> codeNames(Iterable<Status.Code> codes) {
        List<Object> out = new ArrayList<>();
        for (Status.Code c : codes) {
            out.add(c.name());
        }
        return out;
    }
}
