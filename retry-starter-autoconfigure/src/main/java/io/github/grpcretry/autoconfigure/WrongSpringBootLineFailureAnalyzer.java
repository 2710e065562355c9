package io.github.grpcretry.autoconfigure;

import io.github.grpcretry.integration.WrongSpringBootLineException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports a {@link WrongSpringBootLineException}: what was found and which artifact fits. */
public class WrongSpringBootLineFailureAnalyzer extends AbstractFailureAnalyzer<WrongSpringBootLineException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, WrongSpringBootLineException cause) {
        return new FailureAnalysis(cause.description(), cause.action(), cause);
    }
}
