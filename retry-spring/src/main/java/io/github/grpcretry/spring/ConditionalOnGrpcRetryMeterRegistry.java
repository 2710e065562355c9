package io.github.grpcretry.spring;

import io.micrometer.core.instrument.MeterRegistry;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;

/**
 * Matches when grpc-retry is enabled ({@link ConditionalOnGrpcRetryEnabled}), Micrometer is on the class
 * path and a {@link MeterRegistry} bean exists (the Boot line's metrics auto-configuration, ordered before,
 * or the application's own): the condition of each line's meters.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@Documented
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnGrpcRetryEnabled
public @interface ConditionalOnGrpcRetryMeterRegistry {
}
