package io.github.grpcretry.internal.pushback;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Metadata;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PushbackTest {

    @Test
    void absentTrailerIsAbsent() {
        assertThat(Pushback.parse(new Metadata())).isEqualTo(Pushback.ABSENT);
        assertThat(Pushback.parse((Metadata) null)).isEqualTo(Pushback.ABSENT);
        assertThat(Pushback.parse(List.of())).isEqualTo(Pushback.ABSENT);
    }

    @ParameterizedTest(name = "\"{0}\" -> {1}")
    @CsvSource(delimiter = '|', value = {
        "300|300",
        "0|0",
        "+25|25",
        "-0|0",
        "2147483647|2147483647",
        "-1|-2",
        "-300|-2",
        "2147483648|-2",
        "99999999999999999999|-2",
        "-2147483649|-2",
        "soon|-2",
        "1.5|-2",
        "' 5'|-2",
        "'5 '|-2",
        "''|-2",
        "-|-2",
        "0x10|-2"})
    void oneValue(String value, long expected) {
        Metadata trailers = new Metadata();
        trailers.put(Pushback.KEY, value);
        assertThat(Pushback.parse(trailers)).isEqualTo(expected);
        assertThat(Pushback.parseValue(value)).isEqualTo(expected);
    }

    @Test
    void severalValuesMeanStopEvenWhenEachIsValid() {
        Metadata trailers = new Metadata();
        trailers.put(Pushback.KEY, "10");
        trailers.put(Pushback.KEY, "20");
        assertThat(Pushback.parse(trailers)).isEqualTo(Pushback.STOP);
        assertThat(Pushback.isStop(Pushback.parse(trailers))).isTrue();
    }

    @Test
    void classification() {
        assertThat(Pushback.isDelay(0)).isTrue();
        assertThat(Pushback.isDelay(Pushback.ABSENT)).isFalse();
        assertThat(Pushback.isDelay(Pushback.STOP)).isFalse();
        assertThat(Pushback.isStop(Pushback.ABSENT)).isFalse();
    }
}
