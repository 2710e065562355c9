package io.github.grpcretry.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.sample.lab.LabContexts;
import io.github.grpcretry.sample.lab.LabRow;
import io.github.grpcretry.sample.lab.LabTable;
import io.github.grpcretry.sample.lab.R7TriedBackends;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The lab's R7 run small (120 calls per row instead of the lab's 2,400) on Spring Boot 3.5 (net.devh) with the
 * interceptor engine, so the experiment cannot rot: both scenarios, avoidance off and on; the "on" rows keep their
 * rule (no retry or hedge to a tried backend, no failed call while two healthy backends are ready).
 */
class R7TriedBackendsTest {

    @Test
    void avoidanceSendsNoRetryOrHedgeToATriedBackend() {
        LabTable t = R7TriedBackends.run(LabContexts.clients("interceptor"), 42, 120);
        t.rows().forEach(r -> System.out.println(r.caseName() + " → " + r.measured()));
        assertThat(t.id()).isEqualTo("R7");
        List<LabRow> rows = t.rows();
        assertThat(rows).extracting(LabRow::caseName).containsExactly(
                "one backend always UNAVAILABLE, retry 3 attempts, avoidance off",
                "one backend always UNAVAILABLE, retry 3 attempts, avoidance on",
                "one backend 200 ms slow, hedging 3 attempts every 30ms, avoidance off",
                "one backend 200 ms slow, hedging 3 attempts every 30ms, avoidance on");
        assertThat(rows).allSatisfy(r -> assertThat(r.measured()).startsWith("120 calls: "));
        assertThat(rows.get(1).measured()).contains(" 0 failed, ").contains(" retries to a tried backend");
        assertThat(rows.get(3).measured()).contains(" hedges to a tried backend");
        assertThat(rows.stream().filter(r -> r.check() == LabRow.Check.RULE)).hasSize(2)
                .allSatisfy(r -> assertThat(r.pass()).as(r.caseName() + " → " + r.measured()).isTrue());
    }
}
