package io.github.grpcretry.sample.springgrpc.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.sample.lab.LabReport;
import io.github.grpcretry.sample.lab.LabRow;
import io.github.grpcretry.sample.lab.LabTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the Spring Boot 4.1 sample's lab as {@code --lab} does (R1 and R2, through {@code grpc.retry.*} and
 * through Spring Boot's own service config; R7 small, 120 calls per row; R8) and checks its rows: deterministic rows exactly, random rows
 * within their tolerance, the timing rows' lower bounds, and R2's figures by name on both routes.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SpringGrpcLabTest {

    @TempDir
    static Path out;

    LabReport report;

    @BeforeAll
    void runLab() {
        report = SpringGrpcLab.run(SpringGrpcLab.Options.parse(new String[] {"--lab", "--lab.out=" + out,
                "--lab.r7.calls=120"}));
        report.write(out);
        System.out.println(report.console());
    }

    LabTable table(String id) {
        return report.tables().stream().filter(t -> t.id().equals(id)).findFirst().orElseThrow();
    }

    static String measured(LabTable table, String caseName) {
        return table.rows().stream().filter(r -> r.caseName().equals(caseName)).findFirst().orElseThrow().measured();
    }

    @Test
    void bothRoutesHaveR1AndR2OnTheInterceptorEngine() {
        assertThat(report.engine()).isEqualTo("interceptor");
        assertThat(report.tables()).extracting(LabTable::id).containsExactly("R1", "R2", "R1-boot", "R2-boot", "R7", "R8");
        assertThat(table("R1").title()).endsWith("through grpc.retry.*");
        assertThat(table("R1-boot").title()).endsWith("through spring.grpc.client.channel.*.service-config");
        assertThat(report.tables().stream().flatMap(t -> t.rows().stream()))
                .noneMatch(r -> r.check() == LabRow.Check.NOT_AVAILABLE);
        // the same cases on both routes
        assertThat(table("R1-boot").rows()).extracting(LabRow::caseName)
                .containsExactlyElementsOf(table("R1").rows().stream().map(LabRow::caseName).toList());
        assertThat(table("R2-boot").rows()).extracting(LabRow::caseName)
                .containsExactlyElementsOf(table("R2").rows().stream().map(LabRow::caseName).toList());
    }

    @Test
    void deterministicRowsMatchExactly() {
        assertThat(report.rows().filter(r -> r.check() == LabRow.Check.EXACT)).hasSizeGreaterThanOrEqualTo(48);
        assertThat(report.failedExact()).as("exact rows that deviate").isEmpty();
        assertThat(report.failedRule()).as("rule rows that break their rule").isEmpty();
        assertThat(report.exitCode()).isZero();
    }

    /** R7's "on" rows keep their rule: no retry or hedge to a tried backend, no failed call (the failing backend). */
    @Test
    void r7NoRetryOrHedgeGoesToATriedBackend() {
        LabTable r7 = table("R7");
        assertThat(r7.rows()).hasSize(4).allSatisfy(r -> assertThat(r.measured()).startsWith("120 calls: "));
        assertThat(r7.rows().stream().filter(r -> r.check() == LabRow.Check.RULE)).hasSize(2)
                .allSatisfy(r -> assertThat(r.pass()).as(r.caseName() + " → " + r.measured()).isTrue());
    }

    /**
     * R8: the broken stream without a resumption ends at the first break, the unbroken one arrives whole, and the
     * broken and stalled one, resumed by the FeedResumption bean, arrives whole, each item once in order, with its
     * resumptions counted.
     */
    @Test
    void r8ALongStreamArrivesWholeThroughBreaksAndAStall() {
        LabTable r8 = table("R8");
        assertThat(r8.rows()).hasSize(3);
        assertThat(r8.rows().get(0).measured()).isEqualTo("10,000 items, each once in order, UNAVAILABLE");
        assertThat(r8.rows().get(0).pass()).isTrue();
        assertThat(r8.rows().get(1).measured()).startsWith("100,000 items, each once in order, OK in ");
        LabRow resumed = r8.rows().get(2);
        assertThat(resumed.check()).isEqualTo(LabRow.Check.RULE);
        assertThat(resumed.measured()).startsWith("100,000 items, each once in order, OK; 10 resumptions, 11 attempts in ");
        assertThat(resumed.pass()).as(resumed.measured()).isTrue();
    }

    @Test
    void r2FiguresOnBothRoutes() {
        for (String id : List.of("R2", "R2-boot")) {
            LabTable r2 = table(id);
            assertThat(measured(r2, "always failing, 40 calls, no throttling"))
                    .isEqualTo("120 arrivals; first 12 calls [3 3 3 3 3 3 3 3 3 3 3 3]");
            assertThat(measured(r2, "always failing, 40 calls, throttling"))
                    .isEqualTo("43 arrivals; first 12 calls [3 2 1 1 1 1 1 1 1 1 1 1]");
            assertThat(List.of(0, 20, 50, 60, 70, 80, 100)).extracting(
                    n -> measured(r2, "bucket emptied, " + n + " successes, one failing call"))
                    .containsExactly("1 arrival(s)", "1 arrival(s)", "1 arrival(s)", "1 arrival(s)", "2 arrival(s)",
                            "3 arrival(s)", "3 arrival(s)");
        }
    }

    @Test
    void eachRouteNamesItsOwnPropertyPaths() {
        assertThat(measured(table("R1"), "always UNAVAILABLE, max-attempts 10"))
                .isEqualTo("5 arrivals; start-up WARN names grpc.retry.clients.r1-max10.service-config.method[0].retry.max-attempts");
        assertThat(measured(table("R1-boot"), "always UNAVAILABLE, max-attempts 10")).isEqualTo(
                "5 arrivals; start-up WARN names spring.grpc.client.channel.r1-max10.service-config.method[0].retry.max-attempts");
        assertThat(measured(table("R2-boot"), "token-ratio 0")).isEqualTo(
                "start-up fails naming spring.grpc.client.channel.r2-bad.service-config.retrythrottling.token-ratio");
    }

    @Test
    void randomRowsLieWithinTheirTolerance() {
        assertThat(report.rows().filter(r -> r.check() == LabRow.Check.TOLERANCE)).hasSize(16)
                .as("random rows outside ±2 points / ±0.03").allMatch(LabRow::pass);
    }

    /**
     * The timing rows' lower bounds, which a busy machine cannot break (it only lengthens waits): every call's
     * backoffs at least 40 and 80 ms (initial-backoff 50ms, multiplier 2, jitter ±20 %; 38 and 78 as the lab's
     * own rule allows for the server's two arrival stamps), the pushback gap at least 300 ms (295, likewise).
     * Their upper bounds are shown in the report (range rows), not asserted here.
     */
    @Test
    void theEngineWaitsAtLeastTheBackoffsAndThePushback() {
        for (String id : List.of("R1", "R1-boot")) {
            List<List<Double>> calls = numbers(measured(table(id), "  gaps between arrivals"), "\\[([^\\]]*)\\]");
            assertThat(calls).as(id).hasSize(3).allSatisfy(gaps -> {
                assertThat(gaps).hasSize(2);
                assertThat(gaps.get(0)).isGreaterThanOrEqualTo(38);
                assertThat(gaps.get(1)).isGreaterThanOrEqualTo(78);
            });
            assertThat(Double.parseDouble(measured(table(id), "  gap").replace(" ms", ""))).as(id)
                    .isGreaterThanOrEqualTo(295);
        }
    }

    /** The numbers inside each match of {@code group}'s first group, e.g. "[47 97] [72 114]" → [[47, 97], [72, 114]]. */
    static List<List<Double>> numbers(String measured, String group) {
        List<List<Double>> out = new java.util.ArrayList<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(group).matcher(measured);
        while (m.find()) {
            out.add(java.util.Arrays.stream(m.group(1).trim().split("\\s+")).map(Double::parseDouble).toList());
        }
        return out;
    }

    @Test
    void writesMarkdownAndCsv() throws Exception {
        String md = Files.readString(out.resolve("lab.md"));
        assertThat(md).contains("### R1-boot. retryPolicy (seed 001), through spring.grpc.client.channel.*.service-config");
        assertThat(Files.readString(out.resolve("lab.csv")).lines().count()).isEqualTo(1 + report.rows().count());
    }
}
