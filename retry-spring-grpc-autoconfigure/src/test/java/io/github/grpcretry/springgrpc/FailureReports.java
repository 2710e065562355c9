package io.github.grpcretry.springgrpc;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.core.env.Environment;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.support.SpringFactoriesLoader;

/** What Spring Boot prints for a start-up failure, from the FailureAnalyzers registered in spring.factories. */
public final class FailureReports {

    private FailureReports() {
    }

    /** The first registered analyzer's (in order) description and action, joined by a line "---". */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static String report(Throwable failure) {
        List<FailureAnalyzer> analyzers = new ArrayList<>(SpringFactoriesLoader.forDefaultResourceLocation()
                .load(FailureAnalyzer.class, SpringFactoriesLoader.ArgumentResolver.of(Environment.class, new StandardEnvironment()),
                        SpringFactoriesLoader.FailureHandler.handleMessage((m, e) -> { })));
        analyzers.sort((Comparator) AnnotationAwareOrderComparator.INSTANCE);
        for (FailureAnalyzer analyzer : analyzers) {
            FailureAnalysis analysis = analyzer.analyze(failure);
            if (analysis != null) {
                return analysis.getDescription() + "\n---\n" + analysis.getAction();
            }
        }
        throw new AssertionError("no FailureAnalyzer analyzed " + failure, failure);
    }
}
