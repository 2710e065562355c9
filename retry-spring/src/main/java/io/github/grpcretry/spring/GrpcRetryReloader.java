package io.github.grpcretry.spring;

import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.spring.reload.ReloadableChannels;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.PropertySourcesPlaceholdersResolver;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;

/**
 * Reloads the channels' configuration when Spring Cloud Context reports changed keys that concern it
 * ({@link ReloadableChannels#concerns}): binds again through the line's {@link RetryConfigRebinding},
 * lets {@link ReloadableChannels} apply, hold or reject it per channel, logs each outcome (a rejection with
 * each problem's key, reason and origin) and counts it ({@link ReloadCounter}). A refresh that failed before
 * the environment changed reaches it through {@link FailureRecordingContextRefresher} ({@link #failed}).
 */
final class GrpcRetryReloader implements ApplicationListener<EnvironmentChangeEvent> {

    private static final Log log = LogFactory.getLog(GrpcRetryReloader.class);

    private final ReloadableChannels channels;
    private final RetryConfigRebinding rebinding;
    private final ConfigurableApplicationContext context;
    private final @Nullable ReloadCounter counter;
    private final AtomicLong events = new AtomicLong();

    GrpcRetryReloader(ReloadableChannels channels, RetryConfigRebinding rebinding, ConfigurableApplicationContext context,
            @Nullable ReloadCounter counter) {
        this.channels = Objects.requireNonNull(channels, "channels");
        this.rebinding = Objects.requireNonNull(rebinding, "rebinding");
        this.context = Objects.requireNonNull(context, "context");
        this.counter = counter;
        channels.valuesAtStart(values(context.getEnvironment()));
    }

    @Override
    public void onApplicationEvent(EnvironmentChangeEvent event) {
        events.incrementAndGet();
        List<String> keys = event.getKeys().stream().filter(ReloadableChannels::concerns).sorted().toList();
        if (keys.isEmpty()) {
            return;
        }
        ConfigurableEnvironment environment = context.getEnvironment();
        Binder binder = binder(context);
        ReloadableChannels.Result result = channels.reload(() -> rebinding.resolve(binder), keys, values(environment));
        for (ConfigProblem p : result.problems()) {
            String origin = origin(environment, p.path());
            log.warn("grpc.retry reload rejected, the running configuration stays: " + p.describe()
                    + (origin == null ? "" : " (origin: " + origin + ")"));
        }
        if (result.failure() != null && result.problems().isEmpty()) {
            log.warn("grpc.retry reload rejected, the running configuration stays: " + result.failure().getMessage(),
                    result.failure());
        }
        logAndCount(result);
    }

    /** How many {@code EnvironmentChangeEvent}s arrived: a refresh that raised none failed before it read the configuration. */
    long events() {
        return events.get();
    }

    /**
     * A refresh failed before the environment changed (a syntax error in an imported file, a configuration
     * server that did not answer): {@code failed} on every channel, logged once, counted per channel.
     */
    void failed(RuntimeException failure) {
        ReloadableChannels.Result result = channels.failed(failure);
        String message = result.channels().isEmpty() ? failure.toString()
                : result.channels().values().iterator().next().message();
        log.warn("grpc.retry reload " + message);
        logAndCount(result);
    }

    private void logAndCount(ReloadableChannels.Result result) {
        for (Map.Entry<String, ReloadableChannels.LastReload> e : result.channels().entrySet()) {
            ReloadableChannels.LastReload last = e.getValue();
            switch (last.outcome()) {
                case APPLIED, UNCHANGED -> log.info("grpc.retry reload of channel " + e.getKey() + ": " + last.message());
                case RESTART_REQUIRED -> log.warn("grpc.retry reload of channel " + e.getKey() + ": " + last.message());
                default -> {
                    // rejected and failed are logged once for the whole refresh
                }
            }
            if (counter != null) {
                counter.count(e.getKey(), last.outcome());
            }
        }
    }

    /**
     * The value of every configuration key ({@link ReloadableChannels#concerns}) in {@code environment}, as its
     * highest-precedence property source holds it (not resolved: the reload only compares them).
     */
    static Map<String, String> values(ConfigurableEnvironment environment) {
        Map<String, String> out = new TreeMap<>();
        for (PropertySource<?> source : environment.getPropertySources()) {
            if (source instanceof EnumerablePropertySource<?> enumerable) {
                for (String name : enumerable.getPropertyNames()) {
                    Object value = ReloadableChannels.concerns(name) && !out.containsKey(name) ? enumerable.getProperty(name) : null;
                    if (value != null) {
                        out.put(name, String.valueOf(value));
                    }
                }
            }
        }
        return out;
    }

    /** A binder over the context's environment with the conversions its configuration properties get. */
    static Binder binder(ConfigurableApplicationContext context) {
        ConfigurableEnvironment environment = context.getEnvironment();
        ApplicationConversionService conversions = new ApplicationConversionService();
        conversions.addConverter(new StatusCodeBinding.StatusCodeConverter());
        return new Binder(ConfigurationPropertySources.get(environment), new PropertySourcesPlaceholdersResolver(environment),
                conversions, context.getBeanFactory()::copyRegisteredEditorsTo);
    }

    /** Where the value of {@code path} comes from (a file and line, ...); absent when no source has it. */
    static @Nullable String origin(ConfigurableEnvironment environment, String path) {
        if (!ConfigurationPropertyName.isValid(path)) {
            return null;
        }
        ConfigurationPropertyName name = ConfigurationPropertyName.of(path);
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            ConfigurationProperty p = source.getConfigurationProperty(name);
            if (p != null && p.getOrigin() != null) {
                return p.getOrigin().toString();
            }
        }
        return null;
    }
}
