package io.github.grpcretry.sample;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.Yaml;

/**
 * The operations kit as it ships: the files of the top-level {@code ops/} folder, read from the
 * classpath where retry-core's jar carries them ({@value #ROOT}), and the PromQL they contain.
 */
final class OpsKit {

    static final String ROOT = "META-INF/grpc-retry/ops/";
    static final String RULES = "prometheus/grpc-retry-alerts.yml";
    static final String RULE_TESTS = "prometheus/grpc-retry-alerts-test.yml";
    static final String DASHBOARD = "grafana/grpc-retry-dashboard.json";

    /** What Grafana's variables stand for when the dashboard's queries are checked or run outside Grafana. */
    static final Map<String, String> GRAFANA_VARIABLES = Map.of(
            "$__rate_interval", "1m",
            "$job", ".*",
            "$client", ".*");

    /** Labels that Prometheus adds to every scraped series (so they are not in the application's scrape). */
    static final Set<String> TARGET_LABELS = Set.of("job", "instance");

    private OpsKit() {
    }

    /** The text of one shipped file, {@code relative} to {@value #ROOT}. */
    static String read(String relative) {
        try (InputStream in = OpsKit.class.getClassLoader().getResourceAsStream(ROOT + relative)) {
            if (in == null) {
                throw new AssertionError("not on the classpath: " + ROOT + relative + " (retry-core's jar carries the ops/ folder)");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Writes the shipped files named by {@code relatives} into {@code dir}, keeping their relative paths. */
    static void copyTo(Path dir, String... relatives) throws IOException {
        for (String r : relatives) {
            Path target = dir.resolve(r);
            Files.createDirectories(target.getParent());
            Files.writeString(target, read(r));
        }
    }

    /** The alerting rules: alert name to its PromQL expression, in file order. */
    static Map<String, String> alertExpressions() {
        Map<String, String> alerts = new LinkedHashMap<>();
        for (Map<String, Object> group : list(yaml(RULES).get("groups"))) {
            for (Map<String, Object> rule : list(group.get("rules"))) {
                alerts.put((String) rule.get("alert"), ((String) rule.get("expr")).strip());
            }
        }
        return alerts;
    }

    /** The promtool unit tests: each {@code alert_rule_test} entry as a map (alertname, eval_time, exp_alerts). */
    static List<Map<String, Object>> alertRuleTests() {
        List<Map<String, Object>> all = new ArrayList<>();
        for (Map<String, Object> test : list(yaml(RULE_TESTS).get("tests"))) {
            all.addAll(list(test.get("alert_rule_test")));
        }
        return all;
    }

    static JsonNode dashboard() {
        try {
            return new ObjectMapper().readTree(read(DASHBOARD));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Every PromQL expression of the dashboard, as Grafana sends it (variables unresolved): each
     * panel target's {@code expr}, and the metric selector of each {@code label_values(selector, label)}
     * variable query.
     */
    static List<String> dashboardExpressions() {
        JsonNode d = dashboard();
        List<String> exprs = new ArrayList<>();
        for (JsonNode panel : d.path("panels")) {
            for (JsonNode target : panel.path("targets")) {
                exprs.add(target.path("expr").asText());
            }
        }
        Pattern labelValues = Pattern.compile("label_values\\((.+),\\s*[a-zA-Z_][a-zA-Z0-9_]*\\)");
        for (JsonNode variable : d.path("templating").path("list")) {
            if (variable.path("type").asText().equals("query")) {
                Matcher m = labelValues.matcher(variable.path("query").path("query").asText());
                if (!m.matches()) {
                    throw new AssertionError("variable " + variable.path("name").asText()
                            + " is not a label_values(selector, label) query: " + variable.path("query"));
                }
                exprs.add(m.group(1));
            }
        }
        return exprs;
    }

    /** {@code expr} with Grafana's variables replaced by {@link #GRAFANA_VARIABLES}. */
    static String resolveGrafanaVariables(String expr) {
        String resolved = expr;
        for (Map.Entry<String, String> v : GRAFANA_VARIABLES.entrySet()) {
            resolved = resolved.replace(v.getKey(), v.getValue());
        }
        if (resolved.contains("$")) {
            throw new AssertionError("a Grafana variable this check does not know: " + expr);
        }
        return resolved;
    }

    /** A metric selector of a query: the metric's name and the labels it is matched on with {@code =}. */
    record Selector(String metric, Map<String, String> equalMatchers, Set<String> matchedLabels) {
    }

    private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "offset");
    private static final Set<String> GROUPING = Set.of("by", "without", "on", "ignoring", "group_left", "group_right");

    /**
     * The metric selectors of a PromQL expression: every identifier that is not a function, an
     * aggregation, a keyword or a label inside a grouping clause, with its {@code {...}} matchers.
     * String literals, range and subquery brackets and numbers (durations included) are skipped.
     */
    static List<Selector> selectors(String expr) {
        List<Selector> found = new ArrayList<>();
        int i = 0;
        int n = expr.length();
        while (i < n) {
            char c = expr.charAt(i);
            if (c == '"' || c == '\'' || c == '`') {
                i = skipString(expr, i);
            } else if (c == '[') {
                i = expr.indexOf(']', i) + 1;
            } else if (c == '{') {
                // a selector without a name ({__name__="..."}) is not used by the kit
                int end = closingBrace(expr, i);
                throw new AssertionError("a selector without a metric name at " + i + ": " + expr.substring(i, end + 1));
            } else if (Character.isDigit(c) || (c == '.' && i + 1 < n && Character.isDigit(expr.charAt(i + 1)))) {
                while (i < n && (Character.isLetterOrDigit(expr.charAt(i)) || expr.charAt(i) == '.')) {
                    i++;
                }
            } else if (Character.isLetter(c) || c == '_' || c == ':') {
                int start = i;
                while (i < n && (Character.isLetterOrDigit(expr.charAt(i)) || expr.charAt(i) == '_' || expr.charAt(i) == ':')) {
                    i++;
                }
                String word = expr.substring(start, i);
                int next = skipSpace(expr, i);
                if (GROUPING.contains(word)) {
                    if (next < n && expr.charAt(next) == '(') {
                        i = expr.indexOf(')', next) + 1; // a list of label names
                    }
                } else if (KEYWORDS.contains(word)) {
                    // an operator
                } else if (next < n && expr.charAt(next) == '(' || startsWord(expr, next, "by") || startsWord(expr, next, "without")) {
                    // a function or an aggregation
                } else {
                    Map<String, String> equal = new LinkedHashMap<>();
                    Set<String> labels = new LinkedHashSet<>();
                    if (next < n && expr.charAt(next) == '{') {
                        int end = closingBrace(expr, next);
                        matchers(expr.substring(next + 1, end), equal, labels);
                        i = end + 1;
                    }
                    found.add(new Selector(word, equal, labels));
                }
            } else {
                i++;
            }
        }
        return found;
    }

    private static final Pattern MATCHER = Pattern.compile("\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!=|!~|=)\\s*\"((?:[^\"\\\\]|\\\\.)*)\"\\s*,?");

    private static void matchers(String inside, Map<String, String> equal, Set<String> labels) {
        Matcher m = MATCHER.matcher(inside);
        int at = 0;
        while (at < inside.length() && m.find(at) && m.start() == at) {
            labels.add(m.group(1));
            if (m.group(2).equals("=")) {
                equal.put(m.group(1), m.group(3));
            }
            at = m.end();
        }
        if (!inside.substring(at).isBlank()) {
            throw new AssertionError("cannot read the label matchers {" + inside + "}");
        }
    }

    private static int skipString(String s, int i) {
        char quote = s.charAt(i);
        int j = i + 1;
        while (j < s.length() && s.charAt(j) != quote) {
            j += s.charAt(j) == '\\' && quote != '`' ? 2 : 1;
        }
        return j + 1;
    }

    private static int closingBrace(String s, int open) {
        int j = open + 1;
        while (j < s.length() && s.charAt(j) != '}') {
            j = s.charAt(j) == '"' ? skipString(s, j) : j + 1;
        }
        if (j >= s.length()) {
            throw new AssertionError("unclosed { in " + s);
        }
        return j;
    }

    private static int skipSpace(String s, int i) {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
        return i;
    }

    private static boolean startsWord(String s, int i, String word) {
        int end = i + word.length();
        return s.startsWith(word, i) && (end >= s.length() || !Character.isLetterOrDigit(s.charAt(end)) && s.charAt(end) != '_');
    }

    private static Map<String, Object> yaml(String relative) {
        return new Yaml().load(read(relative));
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Object o) {
        return o == null ? List.of() : (List<Map<String, Object>>) o;
    }
}
