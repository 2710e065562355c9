package io.github.grpcretry.springgrpc;

import io.github.grpcretry.integration.SpringBootLineCheck;
import io.github.grpcretry.integration.WrongSpringBootLineException;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigureOrder;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.Ordered;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Processed before every other auto-configuration: when the classpath does not fit this starter
 * ({@link SpringBootLineCheck#forBoot4Line}: Spring Boot 3, net.devh's starter, or this project's Spring
 * Boot 3.5 starter), its condition stops start-up with a {@link WrongSpringBootLineException}, which
 * {@link WrongSpringBootLineFailureAnalyzer} reports, naming the artifact that fits. It registers no
 * bean. Its annotations and its condition use only types that Spring Boot 3 and 4 share.
 */
@AutoConfiguration
@AutoConfigureOrder(Ordered.HIGHEST_PRECEDENCE)
@Conditional(SpringBootLineAutoConfiguration.LineCondition.class)
public class SpringBootLineAutoConfiguration {

    /** Throws the problem {@link SpringBootLineCheck} finds; never matches otherwise. */
    static class LineCondition implements Condition {
        @Override
        public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
            ClassLoader classLoader = context.getClassLoader() != null ? context.getClassLoader()
                    : SpringBootLineAutoConfiguration.class.getClassLoader();
            SpringBootLineCheck.requireBoot4Line(classLoader);
            return false;
        }
    }
}
