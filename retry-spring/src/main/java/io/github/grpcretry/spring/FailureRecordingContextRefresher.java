package io.github.grpcretry.spring;

import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.cloud.context.refresh.ContextRefresher;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.GenericApplicationListener;
import org.springframework.context.event.GenericApplicationListenerAdapter;
import org.springframework.core.ResolvableType;

/**
 * Spring Cloud's {@link ContextRefresher}, wrapped so that a refresh that fails before the environment
 * changed (a syntax error in an imported file: Spring Cloud raises no {@code EnvironmentChangeEvent}, and its
 * refresh endpoint does not catch) is recorded as {@code failed} on every channel (docs/reload.md). The
 * failure is rethrown: the refresh answers as it would without the starter. Every caller of the refresher
 * gets the wrapper ({@link #wrapping}): the {@code refresh} endpoint, scheduled refreshes, Spring Cloud Bus.
 * The application events the wrapped refresher listens to are forwarded to it.
 */
final class FailureRecordingContextRefresher extends ContextRefresher implements GenericApplicationListener {

    private final ContextRefresher delegate;
    private final @Nullable GenericApplicationListener listener;
    private final ObjectProvider<GrpcRetryReloader> reloader;

    FailureRecordingContextRefresher(ContextRefresher delegate, ConfigurableApplicationContext context,
            ObjectProvider<GrpcRetryReloader> reloader) {
        super(context, null);
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.listener = delegate instanceof ApplicationListener<?> l ? new GenericApplicationListenerAdapter(l) : null;
        this.reloader = Objects.requireNonNull(reloader, "reloader");
    }

    /** Wraps every {@link ContextRefresher} bean (once). */
    static BeanPostProcessor wrapping(ConfigurableApplicationContext context, ObjectProvider<GrpcRetryReloader> reloader) {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String beanName) {
                return bean instanceof ContextRefresher refresher && !(bean instanceof FailureRecordingContextRefresher)
                        ? new FailureRecordingContextRefresher(refresher, context, reloader) : bean;
            }
        };
    }

    @Override
    public Set<String> refresh() {
        return recorded(delegate::refresh);
    }

    @Override
    public Set<String> refreshEnvironment() {
        return recorded(delegate::refreshEnvironment);
    }

    /** Not reached: {@link #refresh} and {@link #refreshEnvironment} hand the whole refresh to the delegate. */
    @Override
    protected void updateEnvironment() {
        delegate.refreshEnvironment();
    }

    private Set<String> recorded(Supplier<Set<String>> refresh) {
        GrpcRetryReloader r = reloader.getIfAvailable();
        long before = r == null ? 0 : r.events();
        try {
            return refresh.get();
        } catch (RuntimeException e) {
            // an EnvironmentChangeEvent during the refresh means the configuration was read (and reloaded)
            if (r != null && r.events() == before) {
                r.failed(e);
            }
            throw e;
        }
    }

    @Override
    public boolean supportsEventType(ResolvableType eventType) {
        return listener != null && listener.supportsEventType(eventType);
    }

    @Override
    public boolean supportsSourceType(@Nullable Class<?> sourceType) {
        return listener != null && listener.supportsSourceType(sourceType);
    }

    @Override
    public int getOrder() {
        return listener != null ? listener.getOrder() : LOWEST_PRECEDENCE;
    }

    @Override
    public void onApplicationEvent(ApplicationEvent event) {
        if (listener != null) {
            listener.onApplicationEvent(event);
        }
    }

    @Override
    public String toString() {
        return "FailureRecordingContextRefresher[" + delegate + "]";
    }
}
