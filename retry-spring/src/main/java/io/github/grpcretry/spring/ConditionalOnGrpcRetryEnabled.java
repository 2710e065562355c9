package io.github.grpcretry.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.context.annotation.Conditional;

/**
 * Matches unless {@code grpc.retry.enabled} is false (missing means enabled): the one switch of
 * every grpc-retry auto-configuration, on both Spring Boot lines. The value is read as Spring Boot's binder
 * reads a boolean property ({@code true}/{@code on}/{@code yes}/{@code 1}, {@code false}/{@code off}/{@code no}/{@code 0},
 * any case); any other value, an empty one included, stops start-up with Spring Boot's binder report (the property, the value, its
 * origin), as the other switches under {@code grpc.retry} do.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@Documented
@Conditional(OnGrpcRetryEnabledCondition.class)
public @interface ConditionalOnGrpcRetryEnabled {
}
