package io.github.grpcretry.spring;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * {@link ConditionalOnGrpcRetryEnabled}: binds {@code grpc.retry.enabled} as a {@code boolean} with Spring
 * Boot's binder, so that the switch accepts exactly what {@link GrpcRetryProperties#enabled()} accepts, and a
 * value no boolean converter reads ({@code maybe}, an empty value) fails with the binder's
 * {@code BindException} (reported by Spring Boot's own failure analyzer) instead of switching the starter off.
 */
class OnGrpcRetryEnabledCondition extends SpringBootCondition {

    static final String PROPERTY = GrpcRetryProperties.PREFIX + ".enabled";

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        // As the property record binds it: a primitive, so an empty value is an error too, not "unset".
        boolean enabled = Binder.get(context.getEnvironment()).bind(PROPERTY, Bindable.of(boolean.class)).orElse(true);
        return enabled ? ConditionOutcome.match(PROPERTY + " is true or not set")
                : ConditionOutcome.noMatch(PROPERTY + " is false");
    }
}
