package io.github.grpcretry.spring.config;

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
        return description(problems, originOf, writtenOf, path -> null);
    }

    /**
     * @param originOf where the value of a property path was set, or null when unknown
     * @param writtenOf the value of a property path as written in the property source that won, or null
     * @param replacedOf for a property path whose value is not set, why: the list entry that held it was replaced
     *     whole by a source of higher priority ({@link ListReplacement}); null when that is not the case
     */
    public static String description(List<ConfigProblem> problems, Function<String, @Nullable String> originOf,
            Function<String, @Nullable String> writtenOf, Function<String, @Nullable ListReplacement> replacedOf) {
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
            ListReplacement replaced = p.value() == null ? replacedOf.apply(p.path()) : null;
            if (replaced != null) {
                description.append("\n    Replaced: ").append(replaced.describe());
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
        return action(problems, path -> null);
    }

    /** @param replacedOf as for {@link #description(List, Function, Function, Function)} */
    public static String action(List<ConfigProblem> problems, Function<String, @Nullable ListReplacement> replacedOf) {
        StringBuilder action = new StringBuilder("Update your configuration:\n");
        for (ConfigProblem p : problems) {
            ListReplacement replaced = p.value() == null ? replacedOf.apply(p.path()) : null;
            action.append("\n    ").append(p.path()).append(": ")
                    .append(replaced == null ? p.fix() : replaced.fix());
        }
        return action.toString();
    }

    /**
     * A property whose value is in a property source but not used: Spring Boot binds a list whole from the one
     * source of highest priority that has any of its elements, so one field of a list entry set in the
     * environment or on the command line replaces the whole list of a YAML file.
     *
     * @param list the list's property path ({@code grpc.retry.clients.svc.service-config.method})
     * @param entry the entry's property path ({@code grpc.retry.clients.svc.service-config.method[0]})
     * @param source the name of the property source that replaced it ({@code commandLineArgs})
     * @param key a key of the list in that source, and where it was set ({@code System Environment Property "..."})
     * @param lost where the value that is not used was set; null when unknown
     */
    public record ListReplacement(String list, String entry, String source, String key, @Nullable String lost) {

        String describe() {
            return "the list entry " + entry + " comes whole from the property source " + source + " (" + key
                    + "), which replaced the list " + list + ": Spring Boot takes a list from the one source of"
                    + " highest priority that has any of its entries" + (lost == null ? "" : "; this value, set in "
                    + lost + ", is not used");
        }

        String fix() {
            return "repeat every value of the entry " + entry + " in the property source " + source
                    + ", not only the one it overrides, or make the override in the source that holds the rest of"
                    + " the list";
        }
    }
}
