package io.github.grpcretry.spring;

import io.github.grpcretry.spring.bootline.WrongSpringBootLineException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a {@link WrongSpringBootLineException}: which line the application runs on and which artifact
 * fits it. Uses only types that Spring Boot 3 and 4 share, so it reports on either line. Registered in
 * this module's {@code META-INF/spring.factories}.
 */
public class WrongSpringBootLineFailureAnalyzer extends AbstractFailureAnalyzer<WrongSpringBootLineException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, WrongSpringBootLineException cause) {
        return new FailureAnalysis(cause.description(), cause.action(), cause);
    }
}
