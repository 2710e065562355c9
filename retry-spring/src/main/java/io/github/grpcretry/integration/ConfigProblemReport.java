package io.github.grpcretry.integration;

import io.github.grpcretry.policy.ConfigProblem;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The text of a start-up report of configuration problems, written once for both Spring Boot lines'
 * FailureAnalyzers, in the layout of Spring Boot's own binding report: per problem the property path
 * (or the service-config file and its JSON path), the value, where the value was set (the origin, when
 * the Boot line can tell: {@code class path resource [application.yml] - 14:27}, an environment
 * variable, ...), and the rule; then one fix per property.
 */
public final class ConfigProblemReport {

    private ConfigProblemReport() {
    }

    /**
     * @param originOf where the value of a property path was set, or null when unknown (a JSON file's
     *     problem names its file and JSON path in its path already)
     */
    public static String description(List<ConfigProblem> problems, Function<String, @Nullable String> originOf) {
        return description(problems, originOf, path -> null);
    }

    /**
     * @param originOf where the value of a property path was set, or null when unknown
     * @param writtenOf the value of a property path as written in the property source that won ({@code 1000000d},
     *     {@code /etc/app/sc.json}), shown instead of the value as bound; null when unknown
     */
    public static String description(List<ConfigProblem> problems, Function<String, @Nullable String> originOf,
            Function<String, @Nullable String> writtenOf) {
        int n = problems.size();
        StringBuilder description = new StringBuilder("The gRPC retry configuration has ").append(n)
                .append(n == 1 ? " invalid value:\n" : " invalid values:\n");
        for (ConfigProblem p : problems) {
            description.append("\n    Property: ").append(p.path())
                    .append("\n    Value:    ").append(p.value() == null ? "(not set)" : written(p, writtenOf));
            // A value that is not set has no origin: any a property source gives belongs to another value. A
            // problem inside a service-config file has the origin of the property that names the file.
            String origin = p.value() == null && !p.path().contains(" $") ? null : originOf.apply(p.path());
            if (origin != null) {
                description.append("\n    Origin:   ").append(origin);
            }
            description.append("\n    Reason:   ").append(p.rule()).append('\n');
        }
        return description.toString();
    }

    private static String written(ConfigProblem p, Function<String, @Nullable String> writtenOf) {
        String written = p.path().contains(" ") ? null : writtenOf.apply(p.path());
        return written != null ? written : String.valueOf(p.value());
    }

    public static String action(List<ConfigProblem> problems) {
        StringBuilder action = new StringBuilder("Update your configuration:\n");
        for (ConfigProblem p : problems) {
            action.append("\n    ").append(p.path()).append(": ").append(p.fix());
        }
        return action.toString();
    }
}
