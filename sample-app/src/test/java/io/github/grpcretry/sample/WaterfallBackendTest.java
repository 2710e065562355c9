package io.github.grpcretry.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.sample.traces.AttemptWaterfall;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The running sample's waterfall names the backend of each attempt: the start-up showcase's retried calls (their
 * first attempts fail) are rows whose every attempt carries the port of the backend it reached, which is the
 * sample's own gRPC server (its channels have that one backend).
 */
@SpringBootTest(properties = {"sample.demo.rate=0", "logging.level.io.github.grpcretry=WARN"})
@DirtiesContext
class WaterfallBackendTest {

    @DynamicPropertySource
    static void grpcPort(DynamicPropertyRegistry registry) throws IOException {
        SampleGrpcPort.free(registry);
    }

    @Autowired
    AttemptWaterfall waterfall;

    @Value("${sample.grpc-port}")
    int grpcPort;

    @Test
    void everyAttemptOfTheShowcasesRetriedCallsNamesTheSamplesGrpcPort() {
        List<AttemptWaterfall.Row> rows = waterfall.rows();
        assertThat(rows).as("the showcase's retried calls").isNotEmpty();
        assertThat(rows).allSatisfy(r -> assertThat(r.attempts()).hasSizeGreaterThanOrEqualTo(2)
                .allSatisfy(a -> assertThat(a.port()).as(r.channel() + " attempt " + a.number()).isEqualTo(grpcPort)));
    }
}
