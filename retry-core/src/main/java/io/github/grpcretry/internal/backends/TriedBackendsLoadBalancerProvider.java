package io.github.grpcretry.internal.backends;

import io.grpc.LoadBalancer;
import io.grpc.LoadBalancerProvider;
import io.grpc.NameResolver;
import io.grpc.Status;
import io.grpc.util.GracefulSwitchLoadBalancer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The load-balancing policy {@value #POLICY_NAME}: runs the policy its configuration names as its child (the
 * application's choice) and sends a retry or a hedge to a backend its call has not tried when the child has one
 * ready ({@link TriedBackendsLoadBalancer}). Its configuration is
 * {@code {"childPolicy": [{"round_robin": {}}, ...]}}, a list the child takes as grpc-java takes a service config's
 * {@code loadBalancingConfig} (its first supported entry). Registered through {@code META-INF/services}; the
 * Spring Boot lines put it around the channel's policy ({@link #wrap}).
 */
public final class TriedBackendsLoadBalancerProvider extends LoadBalancerProvider {

    /** The policy's name in a service config's {@code loadBalancingConfig}. */
    public static final String POLICY_NAME = "grpcretry_avoid_tried_backends";

    static final String CHILD_POLICY = "childPolicy";

    /** The parsed configuration: the child, as {@link GracefulSwitchLoadBalancer} takes it. */
    record Config(Object child) {
    }

    @Override
    public boolean isAvailable() {
        return true;
    }

    @Override
    public int getPriority() {
        return 5;
    }

    @Override
    public String getPolicyName() {
        return POLICY_NAME;
    }

    @Override
    public LoadBalancer newLoadBalancer(LoadBalancer.Helper helper) {
        return new TriedBackendsLoadBalancer(helper);
    }

    @Override
    public NameResolver.ConfigOrError parseLoadBalancingPolicyConfig(Map<String, ?> rawConfig) {
        Object children = rawConfig.get(CHILD_POLICY);
        if (!(children instanceof List<?> list) || list.isEmpty()) {
            return NameResolver.ConfigOrError.fromError(Status.UNAVAILABLE.withDescription(
                    POLICY_NAME + " needs a non-empty list '" + CHILD_POLICY + "', got: " + rawConfig));
        }
        List<Map<String, ?>> entries = new ArrayList<>(list.size());
        for (Object entry : list) {
            if (!(entry instanceof Map<?, ?> map)) {
                return NameResolver.ConfigOrError.fromError(Status.UNAVAILABLE.withDescription(
                        POLICY_NAME + ": an entry of '" + CHILD_POLICY + "' is not an object: " + entry));
            }
            @SuppressWarnings("unchecked") // a JSON object: string keys
            Map<String, ?> typed = (Map<String, ?>) map;
            entries.add(typed);
        }
        NameResolver.ConfigOrError child = GracefulSwitchLoadBalancer.parseLoadBalancingPolicyConfig(entries);
        if (child.getError() != null) {
            return NameResolver.ConfigOrError.fromError(child.getError().augmentDescription(POLICY_NAME + "'s child"));
        }
        return NameResolver.ConfigOrError.fromConfig(new Config(Objects.requireNonNull(child.getConfig(), "child")));
    }

    /**
     * {@code serviceConfig} (in the shape grpc-java's {@code defaultServiceConfig} takes) with its load balancing
     * put under {@value #POLICY_NAME}: its {@code loadBalancingConfig} list, else its (deprecated)
     * {@code loadBalancingPolicy} name, else {@code defaultPolicy} (the builder's default policy name; null =
     * grpc-java's {@code pick_first}) becomes the child. A config already wrapped is returned unchanged.
     */
    public static Map<String, Object> wrap(Map<String, ?> serviceConfig, @Nullable String defaultPolicy) {
        Map<String, Object> out = new LinkedHashMap<>(serviceConfig);
        Object configs = out.remove("loadBalancingConfig");
        Object policy = out.remove("loadBalancingPolicy");
        List<?> children;
        if (configs instanceof List<?> list && !list.isEmpty()) {
            if (list.get(0) instanceof Map<?, ?> first && first.containsKey(POLICY_NAME)) {
                return new LinkedHashMap<>(serviceConfig); // wrapped already
            }
            children = list;
        } else {
            String name = policy instanceof String s ? s : defaultPolicy != null ? defaultPolicy : "pick_first";
            children = List.of(Map.of(name.toLowerCase(Locale.ROOT), Map.of()));
        }
        out.put("loadBalancingConfig", List.of(Map.of(POLICY_NAME, Map.of(CHILD_POLICY, children))));
        return out;
    }
}
