package io.github.grpcretry.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.sample.lab.LabContexts;
import io.github.grpcretry.sample.lab.LabRow;
import io.github.grpcretry.sample.lab.LabTable;
import io.github.grpcretry.sample.lab.R8LongStreams;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The lab's R8 on Spring Boot 3.5 (net.devh) with the interceptor engine, as the lab runs it (100,000 items): the
 * broken stream without a resumption ends at the first break; the unbroken one arrives whole; the broken and stalled
 * one, resumed by the FeedResumption bean, arrives whole, each item once in order, with one resumption per break and
 * one for the stall. The last row is skipped, with its reason, while the build lacks what it needs (the engine's
 * resumption, the streams.* properties).
 */
class R8LongStreamsTest {

    @Test
    void aBrokenAndStalledStreamArrivesWholeWithItsResumptionsCounted() {
        LabTable t = R8LongStreams.run(LabContexts.clients("interceptor"), 42);
        t.rows().forEach(r -> System.out.println(r.caseName() + " → " + r.measured() + " " + r.mark()));
        assertThat(t.id()).isEqualTo("R8");
        List<LabRow> rows = t.rows();
        assertThat(rows).extracting(LabRow::caseName).containsExactly(
                "broken before every 10,000th item, no StreamResumption",
                "unbroken stream",
                "broken before every 10,000th item and stalled once, FeedResumption bean");
        assertThat(rows.get(0).measured()).isEqualTo("10,000 items, each once in order, UNAVAILABLE");
        assertThat(rows.get(0).pass()).isTrue();
        assertThat(rows.get(1).measured()).startsWith("100,000 items, each once in order, OK in ");
        LabRow resumed = rows.get(2);
        assertThat(resumed.check()).isEqualTo(LabRow.Check.RULE);
        assertThat(resumed.measured()).startsWith("100,000 items, each once in order, OK; 10 resumptions, 11 attempts in ");
        assertThat(resumed.pass()).as(resumed.measured()).isTrue();
    }
}
