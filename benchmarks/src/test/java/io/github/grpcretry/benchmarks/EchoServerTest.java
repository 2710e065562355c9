package io.github.grpcretry.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class EchoServerTest {

    @Test
    void seededFailuresHitOneArrivalInFiveTheSameEveryRun() {
        int failures = 0;
        StringBuilder first = new StringBuilder();
        for (long n = 0; n < 100_000; n++) {
            boolean f = EchoServer.fails(n, 20);
            if (f) {
                failures++;
            }
            if (n < 20) {
                first.append(f ? 'x' : '.');
            }
        }
        assertThat(failures).isBetween(19_500, 20_500);
        StringBuilder again = new StringBuilder();
        for (long n = 0; n < 20; n++) {
            again.append(EchoServer.fails(n, 20) ? 'x' : '.');
        }
        assertThat(again.toString()).isEqualTo(first.toString());
        assertThat(EchoServer.fails(7, 0)).isFalse();
    }

    @Test
    void parsesThePreviousAttemptsEcho() {
        assertThat(UnaryFailureBenchmark.parseSmall("0")).isZero();
        assertThat(UnaryFailureBenchmark.parseSmall("3")).isEqualTo(3);
        assertThat(UnaryFailureBenchmark.parseSmall("12")).isEqualTo(12);
    }
}
