package io.github.grpcretry.autoconfigure.metrics;

import io.github.grpcretry.integration.RetryReport;
import java.util.Locale;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * The two settings the observability layer reads, bound (relaxed) from the Environment:
 * {@code grpc.retry.engine} ({@code interceptor} | {@code native}, default {@code interceptor}) and
 * {@code grpc.retry.health.status-when-throttled} (a health status code, default {@code UP}).
 * A stand-in until the starter's {@code GrpcRetryProperties} bean is wired here.
 *
 * @param engine lower case
 * @param statusWhenThrottled upper case
 */
public record GrpcRetryObservabilitySettings(String engine, String statusWhenThrottled) {

    public static final String ENGINE_INTERCEPTOR = "interceptor";
    public static final String ENGINE_NATIVE = "native";

    public GrpcRetryObservabilitySettings {
        engine = engine == null || engine.isBlank() ? ENGINE_INTERCEPTOR : engine.trim().toLowerCase(Locale.ROOT);
        statusWhenThrottled = RetryReport.statusWhenThrottled(statusWhenThrottled);
    }

    public static GrpcRetryObservabilitySettings from(Environment environment) {
        Binder binder = Binder.get(environment);
        return new GrpcRetryObservabilitySettings(
                binder.bind("grpc.retry.engine", String.class).orElse(ENGINE_INTERCEPTOR),
                binder.bind("grpc.retry.health.status-when-throttled", String.class).orElse("UP"));
    }

    /** Whether grpc-java's own retries do the work (no throttle tokens, no suppression reasons observable). */
    public boolean isNative() {
        return ENGINE_NATIVE.equals(engine);
    }
}
