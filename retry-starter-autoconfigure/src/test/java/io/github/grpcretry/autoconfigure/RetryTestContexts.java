package io.github.grpcretry.autoconfigure;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.core.env.Environment;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.support.SpringFactoriesLoader;

/** Real Spring contexts with net.devh's client auto-configuration and this starter's. */
final class RetryTestContexts {

    private RetryTestContexts() {
    }

    static ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(GrpcClientAutoConfiguration.class, GrpcRetryAutoConfiguration.class));
    }

    /**
     * What Spring Boot would print for {@code failure}: the first registered FailureAnalyzer (from
     * META-INF/spring.factories, in order) that analyzes it, description and action joined.
     */
    static String failureReport(Throwable failure) {
        List<FailureAnalyzer> analyzers = new ArrayList<>(SpringFactoriesLoader.forDefaultResourceLocation()
                .load(FailureAnalyzer.class, SpringFactoriesLoader.ArgumentResolver.of(Environment.class, new StandardEnvironment()),
                        SpringFactoriesLoader.FailureHandler.handleMessage((m, e) -> { })));
        analyzers.sort((Comparator<Object>) AnnotationAwareOrderComparator.INSTANCE);
        for (FailureAnalyzer a : analyzers) {
            FailureAnalysis analysis = a.analyze(failure);
            if (analysis != null) {
                return analysis.getDescription() + "\n---\n" + analysis.getAction();
            }
        }
        throw new AssertionError("no FailureAnalyzer analyzed " + failure);
    }
}
