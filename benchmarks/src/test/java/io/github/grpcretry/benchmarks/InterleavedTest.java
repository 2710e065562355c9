package io.github.grpcretry.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The interleaved report takes each ratio within a round, then the median over rounds. */
class InterleavedTest {

    private static Map<Variant, Double> round(double bare, double nativeRetry, double interceptor, double r4j,
            double forwarding, double traced) {
        Map<Variant, Double> m = new EnumMap<>(Variant.class);
        m.put(Variant.BARE, bare);
        m.put(Variant.NATIVE, nativeRetry);
        m.put(Variant.INTERCEPTOR, interceptor);
        m.put(Variant.R4J, r4j);
        m.put(Variant.FORWARDING, forwarding);
        m.put(Variant.TRACED, traced);
        return m;
    }

    @Test
    void ratiosAreTakenWithinEachRoundAndSummarisedByTheirMedian() {
        // the machine halves its speed in round 2: within-round ratios do not move
        String table = Interleaved.render(Transport.NETTY, 1, List.of(
                round(100, 80, 95, 99, 98, 96),
                round(50, 40, 47.5, 49.5, 49, 48),
                round(100, 90, 90, 100, 100, 90)));

        assertThat(table).contains("#### NETTY, 1 thread(s)");
        assertThat(table).contains("| 2 | 50.00 | 40.00 | 47.50 | 49.50 | 49.00 | 48.00 |");
        assertThat(table).contains("| c/a | 0.950 | 0.900 | 0.950 |");
        assertThat(table).contains("| b/a | 0.800 | 0.800 | 0.900 |");
        assertThat(table).contains("| c/b | 1.188 | 1.000 | 1.188 |");
        assertThat(table).contains("| f/e | 0.980 | 0.900 | 0.980 |");
        assertThat(table).contains("| c/f | 0.990 | 0.990 | 1.000 |");
    }

    @Test
    void medianOfAnEvenCountIsTheMeanOfTheMiddleTwo() {
        assertThat(Interleaved.median(new double[] {1, 2, 3, 10})).isEqualTo(2.5);
        assertThat(Interleaved.median(new double[] {0.7, 0.9, 1.1})).isEqualTo(0.9);
    }
}
