package io.github.grpcretry.sample;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.github.grpcretry.sample.OpsKit.Selector;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operations kit's files as retry-core's jar ships them: the alert rules pass {@code promtool check
 * rules} and their unit tests ({@code promtool test rules}, every alert firing and not firing), the
 * dashboard's queries are valid PromQL, and the file in the jar is the one in the repository's
 * {@code ops/} folder.
 *
 * <p>promtool comes from Debian's {@code prometheus} package ({@code -Dpromtool.binary} or the PATH);
 * without it the promtool tests are skipped on a developer's machine and fail under {@code CI=true},
 * where {@code .ci/run} installs it.
 */
class OpsKitFilesTest {

    @TempDir
    Path dir;

    @Test
    void rulesPassPromtoolCheck() throws Exception {
        OpsKit.copyTo(dir, OpsKit.RULES);
        Run check = promtool("check", "rules", OpsKit.RULES);
        assertThat(check.exit).as(check.output).isZero();
        assertThat(check.output).contains("SUCCESS: " + OpsKit.alertExpressions().size() + " rules found");
    }

    @Test
    void everyAlertHasAUnitTestWhereItFiresAndOneWhereItDoesNot() {
        Map<String, String> alerts = OpsKit.alertExpressions();
        assertThat(alerts).containsOnlyKeys("GrpcRetryAmplificationHigh", "GrpcRetryChannelThrottled",
                "GrpcRetryBudgetExhausted", "GrpcRetryDeadlineFastFailsRising", "GrpcRetryAttemptsNearCap",
                "GrpcRetryReloadRejected");
        Set<String> firing = new HashSet<>();
        Set<String> quiet = new HashSet<>();
        for (Map<String, Object> t : OpsKit.alertRuleTests()) {
            String name = (String) t.get("alertname");
            assertThat(alerts).as("a unit test of an alert that is not in the rules").containsKey(name);
            List<?> expected = (List<?>) t.get("exp_alerts");
            (expected == null || expected.isEmpty() ? quiet : firing).add(name);
        }
        assertThat(firing).as("alerts with a unit test where they fire").isEqualTo(alerts.keySet());
        assertThat(quiet).as("alerts with a unit test where they do not fire").isEqualTo(alerts.keySet());
    }

    @Test
    void promtoolUnitTestsOfEveryAlertPass() throws Exception {
        OpsKit.copyTo(dir, OpsKit.RULES, OpsKit.RULE_TESTS);
        Run test = promtool("test", "rules", OpsKit.RULE_TESTS);
        assertThat(test.exit).as(test.output).isZero();
        assertThat(test.output).contains("SUCCESS").doesNotContain("FAILED");
    }

    /** promtool parses the dashboard's queries (variables resolved) as the expressions of recording rules. */
    @Test
    void dashboardQueriesAreValidPromql() throws Exception {
        List<String> exprs = OpsKit.dashboardExpressions();
        StringBuilder rules = new StringBuilder("groups:\n  - name: dashboard-queries\n    rules:\n");
        for (int i = 0; i < exprs.size(); i++) {
            String resolved = OpsKit.resolveGrafanaVariables(exprs.get(i)).replace("'", "''");
            rules.append("      - record: dashboard_query_").append(i).append("\n        expr: '").append(resolved).append("'\n");
        }
        Files.writeString(dir.resolve("dashboard-queries.yml"), rules);
        Run check = promtool("check", "rules", "dashboard-queries.yml");
        assertThat(check.exit).as(check.output + "\n" + rules).isZero();
        assertThat(check.output).contains("SUCCESS: " + exprs.size() + " rules found");
    }

    @Test
    void panelsQueryThePrometheusVariableAndOnlyStarterMeters() {
        JsonNode d = OpsKit.dashboard();
        assertThat(d.path("uid").asText()).isEqualTo("grpc-retry");
        Set<Integer> ids = new HashSet<>();
        List<String> titles = new ArrayList<>();
        for (JsonNode panel : d.path("panels")) {
            assertThat(ids.add(panel.path("id").asInt())).as("panel ids are unique").isTrue();
            titles.add(panel.path("title").asText());
            assertThat(panel.path("datasource").path("uid").asText()).as(panel.path("title").asText()).isEqualTo("${datasource}");
            assertThat(panel.path("gridPos").path("w").asInt()).isPositive();
            assertThat(panel.path("targets")).isNotEmpty();
            for (JsonNode target : panel.path("targets")) {
                assertThat(target.path("refId").asText()).isNotBlank();
                assertThat(target.path("expr").asText()).contains("$client");
            }
        }
        assertThat(titles).hasSize(11);
        for (String expr : OpsKit.dashboardExpressions()) {
            List<Selector> selectors = OpsKit.selectors(expr);
            assertThat(selectors).as(expr).isNotEmpty();
            // the A96 histograms' tags will change; the kit stays on the meters whose tags are fixed
            assertThat(selectors).extracting(Selector::metric).as(expr)
                    .allMatch(m -> m.startsWith("grpc_client_retry_") || m.startsWith("grpc_client_deadline_")
                            || m.equals("grpc_client_channel_state") || m.equals("grpc_client_hedging_delay_seconds"));
        }
    }

    /** The kit in the jar is the repository's ops/ folder (a stale retry-core in the local repository would differ). */
    @Test
    void theShippedFilesAreTheRepositorysOpsFolder() throws IOException {
        Path ops = Path.of("..", "ops");
        for (String f : List.of(OpsKit.RULES, OpsKit.RULE_TESTS, OpsKit.DASHBOARD)) {
            assertThat(OpsKit.read(f)).as(f).isEqualTo(Files.readString(ops.resolve(f), StandardCharsets.UTF_8));
        }
    }

    /** The parser that finds the metric names the kit uses (the scrape test relies on it). */
    @Test
    void selectorsAreTheMetricsOfAnExpressionWithTheirMatchers() {
        List<Selector> s = OpsKit.selectors("""
                sum by (job, client) (rate(grpc_client_retry_attempts_total{kind="initial", client=~"a|b"}[5m] offset 1m))
                  / on (job) group_left min_over_time(grpc_client_retry_budget_balance[1h:5m]) > 1.1e0
                  and count without (method) (x:recorded) unless vector(1) or up{job!="a{b}"}""");
        assertThat(s).containsExactly(
                new Selector("grpc_client_retry_attempts_total", Map.of("kind", "initial"), Set.of("kind", "client")),
                new Selector("grpc_client_retry_budget_balance", Map.of(), Set.of()),
                new Selector("x:recorded", Map.of(), Set.of()),
                new Selector("up", Map.of(), Set.of("job")));
    }

    private record Run(int exit, String output) {
    }

    private Run promtool(String... args) throws Exception {
        Path promtool = RequiredTools.executable("promtool.binary", List.of("promtool"));
        if (promtool == null) {
            RequiredTools.missing("the operations kit's tests need promtool: none found (searched -Dpromtool.binary and the PATH "
                    + System.getenv("PATH") + "); install Debian's prometheus package (apt-get install -y prometheus,"
                    + " as .ci/run does)");
        }
        List<String> command = new ArrayList<>();
        command.add(promtool.toString());
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("promtool ended").isTrue();
        return new Run(p.exitValue(), output);
    }
}
