package io.github.grpcretry.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.sample.client.RetryShowcase;
import io.github.grpcretry.sample.lab.FeedReader;
import io.github.grpcretry.spring.report.RetryReport;
import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The running sample's start-up showcase reads a {@code Feed} stream of 30 items that the server breaks after the
 * 10th and the 20th: the application's {@code FeedResumption} bean resumes it, so all 30 arrive, each once in order,
 * the last from the server's third attempt; the {@code grpcretry} endpoint shows the resumption on the channel.
 */
@SpringBootTest(properties = {"sample.demo.rate=0", "logging.level.io.github.grpcretry=WARN"})
@DirtiesContext
class ShowcaseFeedTest {

    @DynamicPropertySource
    static void grpcPort(DynamicPropertyRegistry registry) throws IOException {
        SampleGrpcPort.free(registry);
    }

    @Autowired
    RetryShowcase showcase;

    @Autowired
    RetryReport report;

    @Test
    void theShowcasesStreamIsResumedAfterEachBreak() {
        FeedReader.Read feed = showcase.feed();
        assertThat(feed.complete(30)).as(feed.text()).isTrue();
        assertThat(feed.attempts()).isEqualTo(3);
        assertThat(report.endpoint("feed").get("streamResumptions"))
                .isEqualTo(Map.of("sample.flaky.Flaky/Feed", "io.github.grpcretry.sample.lab.FeedResumption"));
    }
}
