package io.github.grpcretry.autoconfigure;

import io.github.grpcretry.spring.SpringBootLineCondition;
import io.github.grpcretry.spring.WrongSpringBootLineFailureAnalyzer;
import io.github.grpcretry.spring.bootline.SpringBootLineCheck;
import io.github.grpcretry.spring.bootline.WrongSpringBootLineException;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigureOrder;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.Ordered;

/**
 * Processed before every other auto-configuration: when this Spring Boot 3.5 starter finds itself on
 * Spring Boot 4 (or beside the Spring Boot 4.1 line's starter), its condition stops start-up with a
 * {@link WrongSpringBootLineException}, which {@link WrongSpringBootLineFailureAnalyzer} reports, naming
 * the artifact that fits ({@link SpringBootLineCheck#forBoot3Line}). It registers no bean; its
 * annotations and condition use only types that Spring Boot 3 and 4 share.
 */
@AutoConfiguration
@AutoConfigureOrder(Ordered.HIGHEST_PRECEDENCE)
@Conditional(SpringBootLineCondition.Boot3Line.class)
public class SpringBootLineAutoConfiguration {
}
