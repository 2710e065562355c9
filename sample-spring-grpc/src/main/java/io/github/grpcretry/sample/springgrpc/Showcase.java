package io.github.grpcretry.sample.springgrpc;

import io.github.grpcretry.sample.lab.FeedReader;
import io.github.grpcretry.sample.proto.FeedRequest;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.ExitCodeGenerator;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;
import org.springframework.grpc.client.GrpcChannelFactory;
import org.springframework.stereotype.Component;

/**
 * The start-up showcase: 20 calls over each channel (every fourth call's first attempt fails with
 * UNAVAILABLE) and a table of what happened: calls that succeeded, arrivals at the server, the engine's
 * retries ({@code grpc.client.retry.attempts}, kind {@code retry}) and the throttle's tokens
 * ({@code grpc.client.retry.tokens}); then, per retrying channel, the attempts of its last retried call and the
 * backend each reached ({@link AttemptBackends}: the port, the sample's channels having one backend). The two retrying channels, one configured through
 * {@code grpc.retry.*} and one only through Spring Boot's service config, show the same figures. Last, channel
 * {@code feed} reads a {@code Feed} stream of {@value #FEED_ITEMS} items that the server breaks after every
 * {@value #FEED_BREAK_EVERY}th: the application's {@code FeedResumption} bean resumes it, so all arrive, each once
 * in order, from three attempts.
 */
@Component
public class Showcase implements ApplicationRunner {

    private static final Log log = LogFactory.getLog(Showcase.class);

    static final List<String> CHANNELS = List.of("no-retry", "via-properties", "via-boot");
    static final int CALLS = 20;
    static final int FEED_ITEMS = 30;
    static final int FEED_BREAK_EVERY = 10;

    /** One channel's figures. */
    public record Row(String channel, int ok, int arrivals, double retries, Double tokens) {
    }

    private final GrpcChannelFactory channels;
    private final FlakyService service;
    private final MeterRegistry meters;
    private final Environment environment;
    private final ConfigurableApplicationContext context;
    private final AttemptBackends backends;
    private volatile List<Row> rows = List.of();
    private volatile FeedReader.Read feed;

    public Showcase(GrpcChannelFactory channels, FlakyService service, MeterRegistry meters, Environment environment,
            ConfigurableApplicationContext context, AttemptBackends backends) {
        this.channels = channels;
        this.service = service;
        this.meters = meters;
        this.environment = environment;
        this.context = context;
        this.backends = backends;
    }

    @Override
    public void run(ApplicationArguments args) {
        List<Row> out = new ArrayList<>();
        for (String channel : CHANNELS) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(channels.createChannel(channel));
            int ok = 0;
            for (int n = 1; n <= CALLS; n++) {
                try {
                    stub.withDeadlineAfter(10, TimeUnit.SECONDS)
                            .unaryRpc(SimpleRequest.newBuilder().setRequestMessage(channel + "#" + n).build());
                    ok++;
                } catch (StatusRuntimeException e) {
                    // counted as not ok
                }
            }
            double retries = meters.find("grpc.client.retry.attempts").tag("client", channel).tag("kind", "retry")
                    .counters().stream().mapToDouble(Counter::count).sum();
            Gauge tokens = meters.find("grpc.client.retry.tokens").tag("client", channel).gauge();
            out.add(new Row(channel, ok, service.arrivals(channel), retries, tokens == null ? null : tokens.value()));
        }
        rows = List.copyOf(out);
        StringBuilder table = new StringBuilder("\n\n  channel          calls ok  arrivals  retries  tokens\n");
        for (Row r : rows) {
            table.append(String.format("  %-16s %5d %3d %9d %8.0f  %s%n", r.channel(), CALLS, r.ok(), r.arrivals(),
                    r.retries(), r.tokens() == null ? "-" : String.format("%.1f", r.tokens())));
        }
        table.append("\n  via-properties: grpc.retry.clients.via-properties.*;"
                + " via-boot: spring.grpc.client.channel.via-boot.service-config, run by the engine.\n");
        for (String channel : CHANNELS) {
            String attempts = backends.lastRetried(channel);
            if (attempts != null) {
                table.append(String.format("  %-16s last retried call: %s%n", channel, attempts));
            }
        }
        feed = FeedReader.read(channels.createChannel("feed"), FeedRequest.newBuilder().setKey("showcase-feed")
                .setCount(FEED_ITEMS).setBreakEvery(FEED_BREAK_EVERY).build(), 10_000);
        table.append(String.format("  %-16s a stream of %d items the server breaks after every %dth, resumed by the"
                + " FeedResumption bean: %s, the last from attempt %d%n", "feed", FEED_ITEMS, FEED_BREAK_EVERY,
                feed.text(), feed.attempts()));
        log.info(table);
        if (environment.getProperty("showcase.exit", Boolean.class, false)) {
            int code = expected() ? 0 : 1;
            System.exit(SpringApplication.exit(context, (ExitCodeGenerator) () -> code));
        }
    }

    /**
     * Whether the figures are the deterministic ones: 15/20 without retry; 20/20, 25 arrivals, 5 retries, 6.7 tokens
     * with it (10, less 1 per failure, plus 0.1 per success below the cap); the feed complete from 3 attempts.
     */
    boolean expected() {
        for (Row r : rows) {
            boolean ok = r.channel().equals("no-retry") ? r.ok() == 15 && r.arrivals() == 20
                    : r.ok() == 20 && r.arrivals() == 25 && r.retries() == 5.0 && r.tokens() != null
                            && Math.abs(r.tokens() - 6.7) < 1e-9;
            if (!ok) {
                return false;
            }
        }
        return rows.size() == CHANNELS.size() && feed != null && feed.complete(FEED_ITEMS) && feed.attempts() == 3;
    }

    /** What the showcase's {@code Feed} stream delivered (null before the showcase ran). */
    public FeedReader.Read feed() {
        return feed;
    }

    /** The attempts of {@code channel}'s last retried call and their backends' ports, or null when none was retried. */
    public String lastRetried(String channel) {
        return backends.lastRetried(channel);
    }

    public List<Row> rows() {
        return rows;
    }
}
