package io.github.grpcretry.config;

import io.github.grpcretry.internal.callback.CallbackFailures;
import io.github.grpcretry.internal.config.ChannelNames;
import io.github.grpcretry.internal.config.RetryConfigValidator;
import io.github.grpcretry.internal.config.ServiceConfigDraft;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.policy.ServiceConfigCustomizer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The validated, merged and capped configuration of every channel. Made once at start-up by
 * {@link #resolve}; channels that were not configured are derived from GLOBAL on first request.
 *
 * <p>How a channel's configuration is made:
 * <ol>
 *   <li>its typed properties are laid over its {@code service-config-file} (see
 *       {@link ServiceConfigDraft#overlay}): a typed method entry with the same set of names as a
 *       file entry overlays it field by field, other typed entries are added;</li>
 *   <li>every channel-wide setting it leaves unset (each field of the channel-wide field table,
 *       {@link RetryConfigResolver.ChannelField}, and the retrythrottling fields) is taken from GLOBAL, field by
 *       field;</li>
 *   <li>everything is validated; all problems are thrown together as one
 *       {@link InvalidRetryConfigurationException};</li>
 *   <li>its method entries are layered over GLOBAL's ({@link ServiceConfig#layeredOver}): its own
 *       entries are matched first;</li>
 *   <li>the {@link ServiceConfigCustomizer}s run on the result, which is validated again;</li>
 *   <li>max-attempts above {@code max-attempts-cap} are reported once each as a warning naming the property
 *       and the cap, and capped by the {@link ChannelRetryConfig} made.</li>
 * </ol>
 */
final class ResolvedChannelRetryConfigs implements ChannelRetryConfigs {

    private final ServiceConfig globalServiceConfig;
    private final ChannelDraft.Settings globalSettings;
    private final List<ServiceConfigCustomizer> customizers;
    private final Map<Object, String> maxAttemptsPaths;
    private final Consumer<String> warnings;
    private final Set<String> warned = ConcurrentHashMap.newKeySet();
    private final Map<String, ChannelRetryConfig> configured;
    private final ChannelRetryConfig global;
    private final ConcurrentHashMap<String, ChannelRetryConfig> derived = new ConcurrentHashMap<>();
    /** Each configured channel's own service config (before GLOBAL's entries) and settings, for relaxed matches. */
    private final Map<String, ServiceConfig> ownConfigs;
    private final Map<String, ChannelDraft.Settings> settings;
    /** The property path of the GLOBAL entry, or null when there is none. */
    private final @Nullable String globalPath;
    /** The entries some channel was matched to (exactly or relaxed) so far. */
    private final Set<String> matchedEntries = ConcurrentHashMap.newKeySet();

    private ResolvedChannelRetryConfigs(ServiceConfig globalServiceConfig, ChannelDraft.Settings globalSettings,
            List<ServiceConfigCustomizer> customizers, Map<Object, String> maxAttemptsPaths, Consumer<String> warnings,
            Map<String, ServiceConfig> ownConfigs, Map<String, ChannelDraft.Settings> settings,
            @Nullable String globalPath, List<String> validationWarnings) {
        this.globalServiceConfig = globalServiceConfig;
        this.ownConfigs = Map.copyOf(ownConfigs);
        this.settings = Map.copyOf(settings);
        this.globalPath = globalPath;
        this.globalSettings = globalSettings;
        this.customizers = List.copyOf(customizers);
        this.maxAttemptsPaths = maxAttemptsPaths;
        this.warnings = msg -> {
            if (warned.add(msg)) {
                warnings.accept(msg);
            }
        };
        validationWarnings.forEach(this.warnings);
        List<ConfigProblem> problems = new ArrayList<>();
        // not customized, so never left out
        this.global = Objects.requireNonNull(
                assemble(ChannelRetryConfigs.GLOBAL, globalServiceConfig, globalSettings, false, problems));
        Map<String, ChannelRetryConfig> made = new LinkedHashMap<>();
        for (Map.Entry<String, ServiceConfig> e : ownConfigs.entrySet()) {
            made.put(e.getKey(), assemble(e.getKey(), e.getValue().layeredOver(globalServiceConfig),
                    Objects.requireNonNull(settings.get(e.getKey()), e.getKey()), true, problems));
        }
        throwIfAny(problems);
        this.configured = Collections.unmodifiableMap(made);
    }

    /**
     * Validates and merges every channel.
     *
     * @param drafts one draft per configured channel, GLOBAL included when configured; each draft's
     *     service config is the typed properties already laid over the file
     * @param customizers applied in order to each channel's merged config
     * @param earlierProblems problems found before (unreadable or malformed files); reported together
     *     with the ones found here
     * @param warnings receives each cap warning once (at start-up for configured channels and GLOBAL,
     *     later for channels derived on first request)
     * @throws InvalidRetryConfigurationException listing every problem
     */
    static ResolvedChannelRetryConfigs resolve(Map<String, ChannelDraft> drafts, List<ServiceConfigCustomizer> customizers,
            List<ConfigProblem> earlierProblems, Consumer<String> warnings) {
        List<ConfigProblem> problems = new ArrayList<>(earlierProblems);
        RetryConfigValidator validator = new RetryConfigValidator(problems, new ArrayList<>());
        Map<Object, String> paths = new IdentityHashMap<>();
        ChannelDraft globalDraft = drafts.get(ChannelRetryConfigs.GLOBAL);
        if (globalDraft == null) {
            globalDraft = ChannelDraft.empty(ChannelRetryConfigs.GLOBAL, "grpc.retry.clients." + ChannelRetryConfigs.GLOBAL);
        }
        ServiceConfig globalOwn = validator.serviceConfig(globalDraft.serviceConfig(), paths);
        ChannelDraft.Settings globalSettings = globalDraft.settings(validator);
        Map<String, ServiceConfig> own = new LinkedHashMap<>();
        Map<String, ChannelDraft.Settings> settings = new LinkedHashMap<>();
        for (Map.Entry<String, ChannelDraft> e : new TreeMap<>(drafts).entrySet()) {
            String channel = e.getKey();
            if (channel.equals(ChannelRetryConfigs.GLOBAL)) {
                continue;
            }
            ChannelDraft d = e.getValue().inheriting(globalDraft);
            own.put(channel, validator.serviceConfig(d.serviceConfig(), paths));
            settings.put(channel, d.settings(validator));
        }
        throwIfAny(problems);
        return new ResolvedChannelRetryConfigs(globalOwn, globalSettings, customizers == null ? List.of() : customizers,
                paths, warnings == null ? w -> { } : warnings, own, settings,
                drafts.containsKey(ChannelRetryConfigs.GLOBAL) ? globalDraft.path() : null, validator.warnings());
    }

    private static void throwIfAny(List<ConfigProblem> problems) {
        if (!problems.isEmpty()) {
            throw new InvalidRetryConfigurationException(new ArrayList<>(new LinkedHashSet<>(problems)));
        }
    }

    private @Nullable ChannelRetryConfig assemble(String channel, ServiceConfig merged,
            ChannelDraft.Settings s,
            boolean customize, List<ConfigProblem> problems) {
        ServiceConfig config = merged;
        if (customize && !customizers.isEmpty()) {
            for (ServiceConfigCustomizer c : customizers) {
                try {
                    config = c.customize(channel, config);
                } catch (RuntimeException e) {
                    // docs/design.md §14: visible, never swallowed; the start-up report names the customizer
                    CallbackFailures.SHARED.failed("ServiceConfigCustomizer", c, "customize", e,
                            "the configuration of channel " + channel + " is invalid");
                    problems.add(new ConfigProblem("ServiceConfigCustomizer(" + channel + ")", c.toString(),
                            "the customizer threw " + e, "fix the customizer: it must return a service config"));
                    return null;
                }
                if (config == null) {
                    break;
                }
            }
            if (config != merged) {
                new RetryConfigValidator(problems).check(config, "ServiceConfigCustomizer(" + channel + ")");
                if (config == null) {
                    return null;
                }
            }
        }
        warnCapped(channel, config, s);
        return s.config().withServiceConfig(channel, config); // the record caps the policies
    }

    private void warnCapped(String channel, ServiceConfig config, ChannelDraft.Settings s) {
        int cap = s.config().maxAttemptsCap();
        for (int i = 0; i < config.methodConfigs().size(); i++) {
            MethodConfig mc = config.methodConfigs().get(i);
            Object policy = null;
            int attempts = 0;
            String kind = null;
            if (mc.retryPolicy() != null && mc.retryPolicy().maxAttempts() > cap) {
                policy = mc.retryPolicy();
                attempts = mc.retryPolicy().maxAttempts();
                kind = "retryPolicy";
            } else if (mc.hedgingPolicy() != null && mc.hedgingPolicy().maxAttempts() > cap) {
                policy = mc.hedgingPolicy();
                attempts = mc.hedgingPolicy().maxAttempts();
                kind = "hedgingPolicy";
            }
            if (policy == null) {
                continue;
            }
            String path = maxAttemptsPaths.get(policy);
            if (path == null) {
                path = "ServiceConfigCustomizer(" + channel + ") methodConfig[" + i + "]." + kind + ".maxAttempts";
            }
            warnings.accept(path + " = " + attempts + " is above the max-attempts-cap " + cap + " (" + s.maxAttemptsCapPath()
                    + "): capped, calls make at most " + cap + " attempts");
        }
    }

    /**
     * The configuration of {@code channel}: its own entry's (the entry of its exact name, else the one whose
     * name has the same uniform form, {@link ChannelNames}), else GLOBAL's. A channel without an entry of its
     * own while an entry that no channel matched so far is one edit away from its name gets one warning
     * naming both.
     *
     * @throws InvalidRetryConfigurationException for a channel whose name folds to GLOBAL while a GLOBAL entry
     *     exists: that entry holds every channel's defaults, so it cannot be this channel's own
     */
    @Override
    public ChannelRetryConfig forChannel(String channel) {
        if (ChannelRetryConfigs.GLOBAL.equals(channel) && globalPath == null) {
            return global;
        }
        if (globalPath != null && ChannelNames.isGlobal(channel)) {
            throw new InvalidRetryConfigurationException(List.of(reservedName(channel, globalPath)));
        }
        ChannelRetryConfig c = configured.get(channel);
        if (c != null) {
            matchedEntries.add(channel);
            return c;
        }
        return derived.computeIfAbsent(channel, ch -> {
            List<ConfigProblem> problems = new ArrayList<>();
            Map.Entry<String, ServiceConfig> entry = null;
            for (Map.Entry<String, ServiceConfig> e : ownConfigs.entrySet()) {
                if (ChannelNames.matches(e.getKey(), ch)) {
                    entry = e;
                    break;
                }
            }
            ChannelRetryConfig made;
            if (entry != null) {
                matchedEntries.add(entry.getKey());
                made = assemble(ch, entry.getValue().layeredOver(globalServiceConfig),
                        Objects.requireNonNull(settings.get(entry.getKey()), entry.getKey()), true, problems);
            } else {
                warnNearMiss(ch);
                made = assemble(ch, globalServiceConfig, globalSettings, true, problems);
            }
            throwIfAny(problems);
            return made;
        });
    }

    /** The problem of a channel named GLOBAL in some spelling while the GLOBAL entry exists. */
    static ConfigProblem reservedName(String channel, String globalPath) {
        return new ConfigProblem(globalPath, "(the defaults of every channel; a channel named " + channel + " was made)",
                "the entry name GLOBAL is reserved, in any case (global, Global, GRPC_RETRY_CLIENTS_GLOBAL_...), for the"
                        + " defaults every channel inherits: it cannot be the entry of the channel " + channel
                        + ", and what it sets applies to every channel",
                "rename the channel " + channel + " (a channel named GLOBAL in any case cannot have an entry of its own);"
                        + " keep " + globalPath + " only for settings every channel is to inherit");
    }

    /** The one warning for a channel without an entry of its own and an unmatched entry one edit away from its name. */
    private void warnNearMiss(String channel) {
        for (String key : ownConfigs.keySet()) {
            if (!matchedEntries.contains(key) && ChannelNames.oneEditApart(key, channel)) {
                warnings.accept("Channel " + channel + " has no entry of its own under grpc.retry.clients and runs with"
                        + " GLOBAL's configuration, while the entry grpc.retry.clients." + key + " matches no channel"
                        + " made so far and is one edit away from its name: if the entry is meant for this channel,"
                        + " rename it to grpc.retry.clients." + channel);
            }
        }
    }

    @Override
    public Set<String> configuredChannels() {
        return Collections.unmodifiableSet(new TreeSet<>(configured.keySet()));
    }

}
