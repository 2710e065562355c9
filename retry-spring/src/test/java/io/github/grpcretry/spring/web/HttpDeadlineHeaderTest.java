package io.github.grpcretry.spring.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Context;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class HttpDeadlineHeaderTest {

    private final HttpDeadlineHeader header = new HttpDeadlineHeader(" X-Request-Timeout-Ms ", Duration.ofSeconds(30));

    @Test
    void aWholeNumberOfMillisecondsClampedToTheMaximum() {
        assertThat(header.header()).isEqualTo("X-Request-Timeout-Ms");
        assertThat(header.timeoutNanos("250")).isEqualTo(TimeUnit.MILLISECONDS.toNanos(250));
        assertThat(header.timeoutNanos(" +250 ")).isEqualTo(TimeUnit.MILLISECONDS.toNanos(250));
        assertThat(header.timeoutNanos("0")).isZero();
        assertThat(header.timeoutNanos("999999999")).isEqualTo(Duration.ofSeconds(30).toNanos());
    }

    @Test
    void unusableValuesAreIgnored() {
        for (String v : new String[] {null, "", " ", "-1", "1.5", "abc", "١٢٣", "99999999999999999999", "+", "1 2"}) {
            assertThat(header.timeoutNanos(v)).as(String.valueOf(v)).isEqualTo(-1);
        }
    }

    @Test
    void theContextCarriesTheClampedDeadlineAndNoneForAnUnusableValue() {
        try (HttpDeadlineHeader h = new HttpDeadlineHeader("X-Request-Timeout-Ms", Duration.ofSeconds(30))) {
            assertThat(h.context(null)).isNull();
            assertThat(h.context("abc")).isNull();
            Context.CancellableContext context = h.context("999999999");
            assertThat(context).isNotNull();
            try {
                long remaining = context.getDeadline().timeRemaining(TimeUnit.NANOSECONDS);
                assertThat(remaining).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(30).toNanos());
            } finally {
                context.cancel(null);
            }
        }
    }
}
