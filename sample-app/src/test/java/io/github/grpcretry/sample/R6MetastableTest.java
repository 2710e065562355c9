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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * R6, shortened to 12 s (the stall at 2–4 s), on the interceptor engine: the lab's own table, whose
 * rule rows are the orderings the queueing model predicts (docs/metastable.md), each with at least
 * 2 s to spare: plain A6 retries do not recover within the run and their arrivals stay above the
 * server's capacity; throttling and the budget recover within it; the budget with the server dropping
 * expired calls recovers no later than no retry + 1 s; the budget's amplification stays within
 * 1 + ratio; nothing collapses before the stall or without it.
 */
class R6MetastableTest {

    @TempDir
    Path out;

    @Test
    void theStallOutlivesItselfOnlyWithPlainRetries() throws Exception {
        LabReport report = Lab.run(new Lab.Options("interceptor", out, Lab.DEFAULT_SEED, true, Set.of("R6")));
        System.out.println(report.console());
        assertThat(report.tables()).extracting(LabTable::id).containsExactly("R6");
        List<LabRow> rows = report.tables().get(0).rows();
        List<LabRow> rules = rows.stream().filter(r -> r.check() == LabRow.Check.RULE).toList();
        assertThat(rules).extracting(LabRow::caseName).containsExactly(
                "A6 retry does not recover",
                "A6 retry: arrivals per second after the stall",
                "retry + throttling recovers within the run",
                "retry + budget recovers within the run",
                "budget + server drops expired: no later than no retry + 1 s",
                "budget: total amplification",
                "before the stall: lowest goodput in a 1 s window",
                "control, no stall: lowest goodput in a 1 s window · amplification");
        assertThat(rules).as("R6's orderings").allSatisfy(r -> assertThat(r.pass())
                .as(r.caseName() + " → " + r.measured() + " (rule: " + r.rule() + ")").isTrue());
        assertThat(rows).noneMatch(r -> r.check() == LabRow.Check.NOT_AVAILABLE);
        assertThat(report.exitCode()).isZero();

        // the per-second series of every run next to lab.md: 5 strategies × (stall, control) × 12 s
        report.write(out);
        List<String> series = Files.readAllLines(out.resolve("r6-series.csv"));
        assertThat(series.get(0)).isEqualTo("strategy,stall,second,offered,arrivals,goodput,wasted,dropped,max_queue");
        assertThat(series).hasSize(1 + 10 * 12);
        assertThat(series).anyMatch(l -> l.startsWith("\"A6 retry\",true,11,"));
    }
}
