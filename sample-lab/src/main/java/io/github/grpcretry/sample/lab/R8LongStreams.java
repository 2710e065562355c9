package io.github.grpcretry.sample.lab;

import io.github.grpcretry.metrics.RetryMeterNames;
import io.github.grpcretry.sample.proto.FeedRequest;
import io.github.grpcretry.sample.server.FlakyServer;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * R8: a long server stream that survives. A Netty server on 127.0.0.1 streams {@value #ITEMS} {@code Feed} items
 * and breaks the stream with UNAVAILABLE before every {@value #BREAK_EVERY}th item; once, at item
 * {@value #STALL_AT}, it stalls (sends nothing for {@value #STALL_MS} ms). The client application declares the
 * {@link FeedResumption} bean (as an application's source, {@code spring.main.sources}) and sets
 * {@code streams.idle-timeout} {@value #IDLE_TIMEOUT} and {@code streams.max-resumes} {@value #MAX_RESUMES} on its
 * channel (retry policy: UNAVAILABLE, 3 attempts, 1 ms backoff). Rows: the unbroken stream (the time to compare
 * with), the broken one without the bean (A6: a committed stream ends with the break), and the broken and stalled
 * one with it, delivered complete, each item once in order, with its resumptions as the engine counted them
 * ({@code grpc.client.retry.attempts}, {@code kind=resume}) and the time it took against the unbroken stream. Runs
 * on either Spring Boot line ({@link LabClients}).
 */
public final class R8LongStreams {

    public static final int ITEMS = 100_000;
    static final int BREAK_EVERY = 10_000;
    static final int STALL_AT = 55_000;
    static final int STALL_MS = 10_000;
    /** Long enough that a loaded machine's scheduling delays never look like a stall; the stall is ten times it. */
    static final String IDLE_TIMEOUT = "1s";
    static final int MAX_RESUMES = 20;
    /** Breaks before 10,000 ... 90,000, and the stall. */
    static final int RESUMES = ITEMS / BREAK_EVERY - 1 + 1;
    private static final long DEADLINE_MS = 60_000;

    private R8LongStreams() {
    }

    public static LabTable run(LabClients clients, long seed) {
        return run(clients, seed, ITEMS);
    }

    /** R8 with a stream of {@code items} (a multiple of {@value #BREAK_EVERY} above {@value #STALL_AT}). */
    public static LabTable run(LabClients clients, long seed, int items) {
        LabTable t = LabTable.of("R8", String.format(Locale.ROOT, "long streams: %,d items from a Netty server on 127.0.0.1"
                + " that breaks the stream before every %,dth and stalls once", items, BREAK_EVERY), "rule", clients);
        boolean interceptor = "interceptor".equals(clients.engine());
        try (FlakyServer server = FlakyServer.start(seed)) {
            try (LabClients.Client plain = clients.client(
                    List.of(ChannelSpec.channel("r8", server.address()).retry(3, "1ms", "1ms", 1)), Map.of())) {
                FeedReader.Read broken = FeedReader.read(plain.channel("r8"), request("r8-plain", 0, items), DEADLINE_MS);
                t.add(LabRow.rule("broken before every " + String.format(Locale.ROOT, "%,d", BREAK_EVERY)
                                + "th item, no StreamResumption", "ends UNAVAILABLE after "
                                + String.format(Locale.ROOT, "%,d", BREAK_EVERY) + " items", broken.text(),
                        broken.ended() == Status.Code.UNAVAILABLE && broken.received() == BREAK_EVERY && broken.inOrderOnce(),
                        "gRFC A6: a server stream is committed by its first response; a break after it ends the call"));
            }
            ChannelSpec spec = ChannelSpec.channel("r8", server.address()).retry(3, "1ms", "1ms", 1)
                    .property("streams.idle-timeout", IDLE_TIMEOUT)
                    .property("streams.max-resumes", Integer.toString(MAX_RESUMES));
            try (LabClients.Client client = clients.client(List.of(spec), Map.of(
                    "spring.main.sources", FeedResumption.class.getName()))) {
                // a whole unbroken stream first, unmeasured: both measured streams run on a warm JVM
                FeedReader.read(client.channel("r8"), request("r8-warm-up", 0, items).toBuilder().setBreakEvery(0).build(),
                        DEADLINE_MS);
                FeedReader.Read unbroken = FeedReader.read(client.channel("r8"), request("r8-unbroken", 0, items)
                        .toBuilder().setBreakEvery(0).build(), DEADLINE_MS);
                t.add(LabRow.info("unbroken stream", "–", unbroken.text() + ms(unbroken),
                        "the time to compare with, on the same channel"));
                String seedText = String.format(Locale.ROOT, "%,d items, each once in order, OK; %d resumptions", items,
                        RESUMES);
                String caseName = "broken before every " + String.format(Locale.ROOT, "%,d", BREAK_EVERY)
                        + "th item and stalled once, FeedResumption bean";
                if (!interceptor) {
                    t.add(LabRow.notAvailable(caseName, seedText,
                            "stream resumption needs the interceptor engine (grpc-java's native retry has none)"));
                    return t;
                }
                double before = resumes(client.meters());
                FeedReader.Read resumed = FeedReader.read(client.channel("r8"), request("r8-resumed", 0, items)
                        .toBuilder().setStallAt(STALL_AT).setStallMs(STALL_MS).build(), DEADLINE_MS);
                double counted = resumes(client.meters()) - before;
                t.add(LabRow.rule(caseName, seedText, String.format(Locale.ROOT, "%s; %.0f resumptions, %d attempts%s"
                                + " (%.2f× the unbroken stream)", resumed.text(), counted, resumed.attempts(), ms(resumed),
                                resumed.millis() / unbroken.millis()),
                        resumed.complete(items) && counted == RESUMES && resumed.attempts() == RESUMES + 1,
                        "the engine resumes the stream after each break and after the idle timeout ("
                                + IDLE_TIMEOUT + ") cuts the stall, from the offset after the last item received;"
                                + " the application sees one stream, each item once, in order"));
            }
        }
        return t;
    }

    private static FeedRequest request(String key, long from, long count) {
        return FeedRequest.newBuilder().setKey(key).setFrom(from).setCount(count).setBreakEvery(BREAK_EVERY).build();
    }

    private static String ms(FeedReader.Read read) {
        return String.format(Locale.ROOT, " in %,.0f ms", read.millis());
    }

    /** The engine's resumed attempts on channel r8 ({@code grpc.client.retry.attempts}, {@code kind=resume}). */
    private static double resumes(MeterRegistry meters) {
        return meters == null ? 0 : meters.find(RetryMeterNames.ATTEMPTS).tag(RetryMeterNames.TAG_CLIENT, "r8")
                .tag(RetryMeterNames.TAG_KIND, "resume").counters().stream().mapToDouble(Counter::count).sum();
    }
}
