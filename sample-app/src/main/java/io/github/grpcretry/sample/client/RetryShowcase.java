package io.github.grpcretry.sample.client;

import io.github.grpcretry.sample.lab.FeedReader;
import io.github.grpcretry.sample.proto.FeedRequest;
import io.github.grpcretry.sample.proto.FlakyGrpc;
import io.github.grpcretry.sample.proto.FlakyReply;
import io.github.grpcretry.sample.proto.FlakyRequest;
import io.github.grpcretry.sample.proto.Script;
import io.github.grpcretry.sample.server.ArrivalLog;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.client.inject.GrpcClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.stereotype.Component;

/**
 * At start-up, makes a few scripted calls through the starter (configured only in application.yml)
 * and logs what the server saw and what the client got, so the retries are visible in the log; last a
 * {@code Feed} stream the server breaks twice, which the application's {@code FeedResumption} bean resumes.
 */
@Component
@ConditionalOnProperty(name = "sample.showcase.enabled", havingValue = "true", matchIfMissing = true)
public class RetryShowcase implements ApplicationRunner {

    private static final Logger log = LoggerFactory.getLogger(RetryShowcase.class);

    @GrpcClient("flaky")
    private FlakyGrpc.FlakyBlockingStub flaky;

    /** The stream's own channel: its breaks do not take tokens from the flaky channel's throttle. */
    @GrpcClient("feed")
    private FlakyGrpc.FlakyBlockingStub feedStub;

    /** The showcase's stream: this many items, broken by the server before every {@link #FEED_BREAK_EVERY}th. */
    static final int FEED_ITEMS = 30;
    static final int FEED_BREAK_EVERY = 10;

    private final ArrivalLog arrivals;
    private volatile FeedReader.Read feed;

    public RetryShowcase(ArrivalLog arrivals) {
        this.arrivals = arrivals;
    }

    @Override
    public void run(ApplicationArguments args) {
        log.info("--- retry showcase: every call below goes through the grpc-retry starter ---");
        show("first two attempts fail with UNAVAILABLE", Script.newBuilder().setFailFirst(2).build());
        show("INTERNAL is not retryable", Script.newBuilder().setFailFirst(5).setCode(Status.Code.INTERNAL.value()).build());
        show("server pushback 300 ms", Script.newBuilder().setFailFirst(1).setPushbackMs("300").build());
        show("server pushback -1 (do not retry)", Script.newBuilder().setFailFirst(5).setPushbackMs("-1").build());
        show("headers sent before the failure (committed)",
                Script.newBuilder().setFailFirst(5).setHeadersBeforeFailure(true).build());
        showFeed();
        log.info("--- showcase done; Actuator: /actuator/health, /actuator/metrics, /actuator/grpcretry ---");
    }

    private void show(String title, Script script) {
        String key = UUID.randomUUID().toString().substring(0, 8);
        long start = System.nanoTime();
        String outcome;
        try {
            FlakyReply reply = flaky.withDeadlineAfter(5, TimeUnit.SECONDS)
                    .call(FlakyRequest.newBuilder().setKey(key).setScript(script).build());
            outcome = "OK on attempt " + reply.getAttempt();
        } catch (StatusRuntimeException e) {
            outcome = e.getStatus().getCode().name();
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        log.info("[{}] {}: {} after {} ms, server saw {} attempt(s)", key, title, outcome, ms, arrivals.attempts(key));
    }

    /** A stream the server breaks after every 10th item: the FeedResumption bean continues it from the next offset. */
    private void showFeed() {
        String key = UUID.randomUUID().toString().substring(0, 8);
        FeedReader.Read read = feed = FeedReader.read(feedStub.getChannel(), FeedRequest.newBuilder().setKey(key)
                .setCount(FEED_ITEMS).setBreakEvery(FEED_BREAK_EVERY).build(), 5000);
        log.info("[{}] a stream of {} items the server breaks after every {}th, resumed by the FeedResumption bean: {}"
                + " after {} ms, server saw {} attempt(s)", key, FEED_ITEMS, FEED_BREAK_EVERY, read.text(),
                Math.round(read.millis()), arrivals.attempts(key));
    }

    /** What the showcase's stream delivered (null before the showcase ran). */
    public FeedReader.Read feed() {
        return feed;
    }
}
