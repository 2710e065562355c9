package io.github.grpcretry.spring;

import java.lang.reflect.Method;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.PropertySourcesPlaceholdersResolver;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.convert.support.GenericConversionService;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.util.ClassUtils;

/**
 * The starter's start-up path run once on a background thread, on a sample configuration of its own, while the
 * application's context starts on the main thread (docs/design.md §13): the classes of the line's configuration
 * and beans are loaded and linked ({@link #link}), Spring Boot's binder binds the sample {@code grpc.retry} tree
 * into {@link GrpcRetryProperties} and the line's resolution (the unknown-key check, validation, the merge with
 * GLOBAL) runs on it ({@link #run}), so that the classes the real start-up needs are ready, and their first calls
 * resolved, when the main thread gets there. As Spring Boot's own background pre-initialisation does, it touches
 * nothing of the application's: its environment, bean factory and conversion service are its own, and what it
 * makes is dropped. The application's configuration is bound and checked on the main thread as before, with the
 * same errors.
 */
public final class BackgroundWarmUp {

    /** A channel configured as most applications configure theirs (docs/configuration.md). */
    private static final Map<String, Object> SAMPLE = Map.ofEntries(
            Map.entry("grpc.retry.clients.sample.service-config.method[0].name[0].service", "sample.Service"),
            Map.entry("grpc.retry.clients.sample.service-config.method[0].retry.max-attempts", "3"),
            Map.entry("grpc.retry.clients.sample.service-config.method[0].retry.initial-backoff", "50ms"),
            Map.entry("grpc.retry.clients.sample.service-config.method[0].retry.max-backoff", "1s"),
            Map.entry("grpc.retry.clients.sample.service-config.method[0].retry.backoff-multiplier", "2"),
            Map.entry("grpc.retry.clients.sample.service-config.method[0].retry.retryable-status-codes", "UNAVAILABLE"),
            Map.entry("grpc.retry.clients.sample.service-config.retrythrottling.max-tokens", "10"),
            Map.entry("grpc.retry.clients.sample.service-config.retrythrottling.token-ratio", "0.1"),
            Map.entry("grpc.retry.deadline.default-timeout", "5s"));

    /** The line's resolution of bound properties, as its auto-configuration runs it. */
    @FunctionalInterface
    public interface Resolution {
        void resolve(GrpcRetryProperties properties, ConfigurableEnvironment environment, ListableBeanFactory beans)
                throws Exception;
    }

    private BackgroundWarmUp() {
    }

    /**
     * Loads and links (without initialising) the classes a start of the starter's configuration needs: each of
     * {@code configurations} whose class conditions hold, the configuration classes it nests and imports, and the
     * types its {@code @Bean} methods return (linked, not followed further: the engine's call classes, say, stay
     * unloaded until a first call). A class whose dependencies are absent (an optional library the application
     * does not have) is skipped: Spring's conditions keep the main thread away from it as before.
     *
     * @return the classes linked
     */
    public static Set<Class<?>> link(Class<?>... configurations) {
        Set<Class<?>> linked = new HashSet<>();
        ArrayDeque<Class<?>> queue = new ArrayDeque<>(List.of(configurations));
        while (!queue.isEmpty()) {
            Class<?> c = queue.poll();
            if (linked.contains(c) || !classConditionsHold(c)) {
                continue;
            }
            try {
                c.getDeclaredConstructors(); // links the class: the verifier's work is done here
                linked.add(c);
                for (Method m : c.getDeclaredMethods()) {
                    Class<?> bean = m.getReturnType();
                    if (m.isAnnotationPresent(Bean.class) && bean.getName().startsWith("io.github.grpcretry.")
                            && linked.add(bean)) {
                        bean.getDeclaredConstructors();
                    }
                }
                for (Class<?> nested : c.getDeclaredClasses()) {
                    if (nested.isAnnotationPresent(Configuration.class)) {
                        queue.add(nested);
                    }
                }
                Import imports = c.getDeclaredAnnotation(Import.class);
                if (imports != null) {
                    queue.addAll(List.of(imports.value()));
                }
            } catch (LinkageError | RuntimeException e) { // an optional dependency absent: not the main thread's either
                continue;
            }
        }
        return linked;
    }

    /** Whether {@code c}'s {@code @ConditionalOnClass} and {@code @ConditionalOnMissingClass} hold. */
    private static boolean classConditionsHold(Class<?> c) {
        try {
            ClassLoader loader = c.getClassLoader();
            ConditionalOnClass present = c.getDeclaredAnnotation(ConditionalOnClass.class);
            if (present != null) {
                present.value(); // throws for a class that is absent
                for (String name : present.name()) {
                    if (!ClassUtils.isPresent(name, loader)) {
                        return false;
                    }
                }
            }
            ConditionalOnMissingClass missing = c.getDeclaredAnnotation(ConditionalOnMissingClass.class);
            if (missing != null) {
                for (String name : missing.value()) {
                    if (ClassUtils.isPresent(name, loader)) {
                        return false;
                    }
                }
            }
            return true;
        } catch (LinkageError | RuntimeException e) {
            return false;
        }
    }

    /**
     * Binds the sample and runs {@code resolution} on it. Throws what they throw: the caller drops it (a warm-up
     * that fails leaves the work to the main thread, where it ran before).
     */
    public static void run(Resolution resolution) throws Exception {
        StandardEnvironment environment = new StandardEnvironment();
        MutablePropertySources sources = environment.getPropertySources();
        sources.remove(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME); // the application's: not read here
        sources.remove(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME);
        sources.addFirst(new MapPropertySource("grpc-retry-warm-up", SAMPLE));
        GenericConversionService statusCodes = new GenericConversionService();
        statusCodes.addConverter(new StatusCodeBinding.StatusCodeConverter());
        Binder binder = new Binder(ConfigurationPropertySources.from(sources),
                new PropertySourcesPlaceholdersResolver(sources),
                List.of(statusCodes, ApplicationConversionService.getSharedInstance()), null, null, null);
        resolution.resolve(binder.bindOrCreate(GrpcRetryProperties.PREFIX, GrpcRetryProperties.class), environment,
                new DefaultListableBeanFactory());
    }
}
