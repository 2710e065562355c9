package io.github.grpcretry.spring;

import io.github.grpcretry.spring.bootline.SpringBootLineCheck;
import java.util.Objects;
import java.util.function.Consumer;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * The condition of each line's {@code SpringBootLineAutoConfiguration}: runs the line's check of the class
 * path (which throws a {@link io.github.grpcretry.spring.bootline.WrongSpringBootLineException} when the class
 * path does not fit the line, reported by {@link WrongSpringBootLineFailureAnalyzer}) and never matches
 * otherwise. Uses only types that Spring Boot 3 and 4 share.
 */
public abstract class SpringBootLineCondition implements Condition {

    private final Consumer<ClassLoader> check;

    SpringBootLineCondition(Consumer<ClassLoader> check) {
        this.check = Objects.requireNonNull(check, "check");
    }

    @Override
    public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
        ClassLoader classLoader = context.getClassLoader() != null ? context.getClassLoader()
                : getClass().getClassLoader();
        check.accept(classLoader);
        return false;
    }

    /** The Spring Boot 3.5 line's check ({@link SpringBootLineCheck#requireBoot3Line}). */
    public static final class Boot3Line extends SpringBootLineCondition {
        public Boot3Line() {
            super(SpringBootLineCheck::requireBoot3Line);
        }
    }

    /** The Spring Boot 4.1 line's check ({@link SpringBootLineCheck#requireBoot4Line}). */
    public static final class Boot4Line extends SpringBootLineCondition {
        public Boot4Line() {
            super(SpringBootLineCheck::requireBoot4Line);
        }
    }
}
