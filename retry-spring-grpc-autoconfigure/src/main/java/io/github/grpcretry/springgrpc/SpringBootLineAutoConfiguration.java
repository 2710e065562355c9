package io.github.grpcretry.springgrpc;

import io.github.grpcretry.spring.SpringBootLineCondition;
import io.github.grpcretry.spring.WrongSpringBootLineFailureAnalyzer;
import io.github.grpcretry.spring.bootline.SpringBootLineCheck;
import io.github.grpcretry.spring.bootline.WrongSpringBootLineException;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigureOrder;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.Ordered;

/**
 * Processed before every other auto-configuration: when the classpath does not fit this starter
 * ({@link SpringBootLineCheck#forBoot4Line}: Spring Boot 3, net.devh's starter, or this project's Spring
 * Boot 3.5 starter), its condition stops start-up with a {@link WrongSpringBootLineException}, which
 * {@link WrongSpringBootLineFailureAnalyzer} reports, naming the artifact that fits. It registers no
 * bean. Its annotations and its condition use only types that Spring Boot 3 and 4 share.
 */
@AutoConfiguration
@AutoConfigureOrder(Ordered.HIGHEST_PRECEDENCE)
@Conditional(SpringBootLineCondition.Boot4Line.class)
public class SpringBootLineAutoConfiguration {
}
