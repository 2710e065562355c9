package io.github.grpcretry.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.sample.lab.Lab;
import io.github.grpcretry.sample.lab.LabReport;
import io.github.grpcretry.sample.lab.LabRow;
import io.github.grpcretry.sample.lab.LabTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the whole lab in-process (as {@code --lab} does) and checks its rows: deterministic rows
 * exactly, random rows within their tolerance, timing rows within their (generous) ranges.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LabTest {

    @TempDir
    static Path out;

    LabReport report;

    @BeforeAll
    void runLab() {
        // R6 (the retry storm) has its own, shortened run: R6MetastableTest
        report = Lab.run(new Lab.Options("auto", out, Lab.DEFAULT_SEED, false, Set.of("R1", "R2", "R3A", "R3B", "R3C")));
        report.write(out);
        System.out.println(report.console());
    }

    @Test
    void runsOnTheInterceptorEngineWheneverItIsInTheBuild() {
        if (DashboardBrowser.interceptorEngineOnClassPath()) {
            assertThat(report.engine()).as("the engine is on the class path, so grpc.retry.engine=interceptor must retry")
                    .isEqualTo("interceptor");
        } else {
            assertThat(report.engine()).isEqualTo("native");
        }
    }

    @Test
    void everyExperimentHasItsTable() {
        assertThat(report.tables()).extracting(LabTable::id).containsExactly("R1", "R2", "R3a", "R3b", "R3c");
        assertThat(report.tables()).allSatisfy(t -> assertThat(t.rows()).isNotEmpty());
        // R1 and R2 need nothing beyond grpc.retry.* and an engine: every row is measured
        assertThat(report.tables().subList(0, 2)).allSatisfy(t -> assertThat(t.rows())
                .noneMatch(r -> r.check() == LabRow.Check.NOT_AVAILABLE));
        if ("interceptor".equals(report.engine())) {
            // budgets exist on the interceptor engine: only the guard may be missing, and only while its
            // package is absent from the build
            assertThat(report.rows().filter(r -> r.check() == LabRow.Check.NOT_AVAILABLE))
                    .allSatisfy(r -> assertThat(r.caseName()).contains("guard"));
        }
        if (getClass().getClassLoader().getResource("io/github/grpcretry/guard") != null) {
            assertThat(report.rows()).noneMatch(r -> r.check() == LabRow.Check.NOT_AVAILABLE);
        }
    }

    @Test
    void deterministicRowsMatchExactly() {
        List<LabRow> exact = report.rows().filter(r -> r.check() == LabRow.Check.EXACT).toList();
        assertThat(exact).hasSizeGreaterThan(20);
        assertThat(report.failedExact()).as("deterministic rows that deviate").isEmpty();
        assertThat(report.exitCode()).isZero();
    }

    @Test
    void randomRowsLieWithinTheirTolerance() {
        List<LabRow> random = report.rows().filter(r -> r.check() == LabRow.Check.TOLERANCE).toList();
        assertThat(random).hasSizeGreaterThanOrEqualTo(8);
        assertThat(random).as("random rows outside ±2 points / ±0.03").allMatch(LabRow::pass);
    }

    @Test
    void timingRowsLieWithinTheirRanges() {
        assertThat(report.rows().filter(r -> r.check() == LabRow.Check.RANGE)).isNotEmpty()
                .as("timing rows outside their ranges").allMatch(LabRow::pass);
    }

    @Test
    void writesMarkdownAndCsv() throws Exception {
        String md = Files.readString(out.resolve("lab.md"));
        String csv = Files.readString(out.resolve("lab.csv"));
        assertThat(md).contains("### R1. retryPolicy", "| case | seed: grpc-go 1.84 | measured now (" + report.engine());
        assertThat(csv.lines().count()).isEqualTo(1 + report.rows().count());
        // the measured column is what ran now, not the seed: the cap row names this run's property path
        assertThat(md).contains("grpc.retry.clients.r1-max10.service-config.method[0].retry.max-attempts");
    }
}
