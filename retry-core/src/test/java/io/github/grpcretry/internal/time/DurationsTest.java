package io.github.grpcretry.internal.time;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {

    @Test
    void textIsTheLargestUnitThatHoldsTheDurationExactly() {
        assertThat(Durations.toText(Duration.ofMillis(50))).isEqualTo("50ms");
        assertThat(Durations.toText(Duration.ofSeconds(1))).isEqualTo("1s");
        assertThat(Durations.toText(Duration.ofSeconds(10))).isEqualTo("10s");
        assertThat(Durations.toText(Duration.ofMillis(1500))).isEqualTo("1500ms");
        assertThat(Durations.toText(Duration.ofMinutes(2))).isEqualTo("2m");
        assertThat(Durations.toText(Duration.ofHours(36))).isEqualTo("36h");
        assertThat(Durations.toText(Duration.ofDays(2))).isEqualTo("2d");
        assertThat(Durations.toText(Duration.ofNanos(1500))).isEqualTo("1500ns");
        assertThat(Durations.toText(Duration.ofNanos(2000))).isEqualTo("2us");
        assertThat(Durations.toText(Duration.ZERO)).isEqualTo("0s");
        assertThat(Durations.toText(Duration.ofMillis(-250))).isEqualTo("-250ms");
        assertThat(Durations.toText(Durations.MAX)).isEqualTo("9223372036854775807ns");
        assertThat(Durations.toText(Duration.ofSeconds(Long.MAX_VALUE))).isEqualTo(Long.MAX_VALUE + "s");
    }

    @Test
    void jsonKeepsTheProtobufForm() {
        assertThat(Durations.toJson(Duration.ofMillis(50))).isEqualTo("0.05s");
        assertThat(Durations.toJson(Duration.ofMillis(-1500))).isEqualTo("-1.5s");
        assertThat(Durations.toJson(Duration.ofNanos(1))).isEqualTo("0.000000001s");
        assertThat(Durations.toJson(Duration.ofNanos(1_000_000_001))).isEqualTo("1.000000001s");
        assertThat(Durations.toJson(Duration.ofNanos(120_000))).isEqualTo("0.00012s");
        assertThat(Durations.toJson(Duration.ofSeconds(3, 999_999_990))).isEqualTo("3.99999999s");
        assertThat(Durations.toJson(Duration.ofNanos(-1))).isEqualTo("-0.000000001s");
        assertThat(Durations.toJson(Duration.ofSeconds(Long.MIN_VALUE, 1))).isEqualTo("-9223372036854775807.999999999s");
    }
}
