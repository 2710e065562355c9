package io.github.grpcretry.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;

/**
 * Matches unless {@code grpc.retry.enabled} is {@code false} (missing means enabled): the one switch of
 * every grpc-retry auto-configuration, on both Spring Boot lines.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@Documented
@ConditionalOnBooleanProperty(name = "grpc.retry.enabled", matchIfMissing = true)
public @interface ConditionalOnGrpcRetryEnabled {
}
