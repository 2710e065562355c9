package io.github.grpcretry.sample.lab;

import static io.github.grpcretry.sample.lab.FlakyCalls.call;
import static io.github.grpcretry.sample.lab.FlakyCalls.failFirst;
import static io.github.grpcretry.sample.lab.FlakyCalls.ms;

import io.github.grpcretry.sample.proto.Script;
import io.github.grpcretry.sample.server.FlakyServer;
import io.grpc.Channel;
import io.grpc.Status;
import java.util.List;
import java.util.stream.Collectors;

/**
 * R1 (seed 001): retryPolicy. Server fails the first N attempts with UNAVAILABLE; policy max-attempts
 * 3, initial-backoff 50ms, multiplier 2. Runs on either Spring Boot line ({@link LabClients}).
 */
public final class R1RetryPolicy {

    private R1RetryPolicy() {
    }

    public static LabTable run(LabClients clients, long seed) {
        LabTable t = LabTable.of("R1", "retryPolicy (seed 001)", "seed: grpc-go 1.84", clients);
        boolean nativeEngine = "native".equals(clients.engine());
        try (FlakyServer server = FlakyServer.start(seed)) {
            String a = server.address();
            List<ChannelSpec> channels = List.of(
                    ChannelSpec.channel("r1-none", a),
                    ChannelSpec.channel("r1-policy", a).retry(3, "50ms", "1s", 2),
                    ChannelSpec.channel("r1-max4", a).retry(4, "5ms", "20ms", 2),
                    ChannelSpec.channel("r1-max10", a).retry(10, "5ms", "20ms", 2),
                    ChannelSpec.channel("r1-deadline", a).retry(3, "100ms", "1s", 2),
                    ChannelSpec.channel("r1-buffer", a).retry(3, "5ms", "20ms", 2).perRpcBufferLimit("256KB"),
                    ChannelSpec.channel("r1-hedging", a).hedging(3, "100ms"));
            try (LabClients.Client client = clients.client(channels, java.util.Map.of())) {
                for (ChannelSpec c : channels) {
                    call(client.channel(c.name()), server, Script.getDefaultInstance()); // connect first
                }
                Channel none = client.channel("r1-none");
                Channel policy = client.channel("r1-policy");

                FlakyCalls.Outcome o = call(none, server, failFirst(5));
                t.add(LabRow.exact("no policy", "1 arrival, UNAVAILABLE", o.count() + " arrival(s), " + o.code(),
                        o.count() == 1 && o.code() == Status.Code.UNAVAILABLE, "1 arrival, UNAVAILABLE"));

                // three calls: each must make 3 arrivals with the retry header; the gaps are checked on the
                // shortest of the three (its lower bound holds for all, and a scheduling hiccup only lengthens)
                List<FlakyCalls.Outcome> reps = new java.util.ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    reps.add(call(policy, server, failFirst(2)));
                }
                boolean threeOk = reps.stream().allMatch(r -> r.count() == 3 && r.ok());
                t.add(LabRow.exact("policy, first 2 fail (3 calls)", "3 arrivals, OK",
                        reps.stream().map(r -> Integer.toString(r.count())).collect(Collectors.joining(" ", "[", "]"))
                                + " arrivals, " + reps.get(0).code(), threeOk, "3 arrivals each, success"));
                double[] minGap = {Double.MAX_VALUE, Double.MAX_VALUE};
                StringBuilder shown = new StringBuilder();
                for (FlakyCalls.Outcome r : reps) {
                    List<Double> g = r.gapsMs();
                    shown.append(g.stream().map(x -> String.format(java.util.Locale.ROOT, "%.0f", x))
                            .collect(Collectors.joining(" ", "[", "] ")));
                    for (int i = 0; i < Math.min(2, g.size()); i++) {
                        minGap[i] = Math.min(minGap[i], g.get(i));
                    }
                }
                boolean gapsOk = minGap[0] >= 38 && minGap[0] <= 60 + 40 && minGap[1] >= 78 && minGap[1] <= 120 + 40;
                t.add(LabRow.range("  gaps between arrivals", "[57 112] ms (jitter: 40–60, 80–120)", shown.toString().trim() + " ms",
                        gapsOk, "shortest gaps within 40–60 ms then 80–120 ms (+ up to 40 ms of scheduling)"));
                boolean headers = reps.stream().allMatch(r -> r.previousHeaders().equals(List.of("none", "1", "2")));
                t.add(LabRow.exact("  grpc-previous-rpc-attempts seen by the server", "[(none) 1 2]",
                        reps.get(0).previousHeaders().toString().replace(",", "") + (headers ? " (each call)" : " (not in every call)"),
                        headers, "[none, 1, 2] in each call"));

                o = call(policy, server, Script.newBuilder().setFailFirst(5).setCode(Status.Code.INTERNAL.value()).build());
                t.add(LabRow.exact("INTERNAL returned, only UNAVAILABLE retryable", "1 arrival, Internal",
                        o.count() + " arrival(s), " + o.code(), o.count() == 1 && o.code() == Status.Code.INTERNAL,
                        "1 arrival, INTERNAL"));

                o = call(client.channel("r1-max4"), server, failFirst(20));
                t.add(LabRow.exact("always UNAVAILABLE, max-attempts 4", "4 arrivals",
                        o.count() + " arrivals, " + o.code(), o.count() == 4 && o.code() == Status.Code.UNAVAILABLE, "4 arrivals"));

                o = call(client.channel("r1-max10"), server, failFirst(20));
                String path = channels.get(3).serviceConfigPath(clients.naming(), "method[0].retry.max-attempts");
                boolean warned = client.warnings().stream().anyMatch(w -> w.contains(path));
                t.add(LabRow.exact("always UNAVAILABLE, max-attempts 10", "5 arrivals (client cap)",
                        o.count() + " arrivals" + (warned ? "; start-up WARN names " + path : "; no start-up WARN naming the property"),
                        o.count() == 5 && warned, "5 arrivals (cap) and a WARN naming the property"));

                o = call(policy, server, Script.newBuilder().setFailFirst(5).setHeadersBeforeFailure(true).build());
                t.add(LabRow.exact("handler sends headers before failing", "1 arrival, Unavailable",
                        o.count() + " arrival(s), " + o.code(), o.count() == 1 && o.code() == Status.Code.UNAVAILABLE,
                        "1 arrival (committed)"));

                // initial-backoff 100ms: the first retry waits 80–120 ms, the second would wait 160–240 ms,
                // so with a 220 ms deadline the second backoff cannot end in time (80 + 160 = 240 > 220; a
                // 250 ms deadline would let the shortest draws through), while the first backoff fits.
                o = call(client.channel("r1-deadline"), server, failFirst(5), 0, 220);
                // grpc-java waits like grpc-go: the seed's figure, exact; ours ends at once with the last
                // status, a deliberate difference (docs/differences.md): a rule
                boolean deadlinePass = o.count() == 2
                        && o.code() == (nativeEngine ? Status.Code.DEADLINE_EXCEEDED : Status.Code.UNAVAILABLE);
                String deadlineCase = "deadline 220 ms, shorter than the second backoff";
                String deadlineMeasured = o.count() + " arrivals, " + o.code();
                t.add(nativeEngine
                        ? LabRow.exact(deadlineCase, "2 arrivals, DeadlineExceeded", deadlineMeasured, deadlinePass,
                                "2 arrivals, DEADLINE_EXCEEDED (grpc-java waits like grpc-go)")
                        : LabRow.rule(deadlineCase, "2 arrivals, DeadlineExceeded", deadlineMeasured, deadlinePass,
                                "2 arrivals as in the seed, then at once the last attempt's status (UNAVAILABLE), not "
                                        + "DEADLINE_EXCEEDED at the deadline: a retry whose backoff cannot end before the "
                                        + "deadline is not waited for"));
                boolean timing = nativeEngine ? o.elapsedMs() >= 210 && o.elapsedMs() <= 300
                        : o.elapsedMs() >= 78 && o.elapsedMs() < 210;
                t.add(LabRow.range("  call returned after", "252 ms (at the deadline)", ms(o.elapsedMs()), timing,
                        nativeEngine ? "at the deadline: 210–300 ms" : "right after the 2nd failure: 80–210 ms, before the deadline"));

                // three calls, the gap the shortest of three: a scheduling hiccup of a busy machine must not
                // read as the pushback plus a backoff; the first call's arrivals and status are the row
                double gap = Double.MAX_VALUE;
                FlakyCalls.Outcome first = null;
                for (int i = 0; i < 3; i++) {
                    o = call(policy, server, Script.newBuilder().setFailFirst(1).setPushbackMs("300").build());
                    first = first == null ? o : first;
                    gap = Math.min(gap, o.gapsMs().isEmpty() ? -1 : o.gapsMs().get(0));
                }
                t.add(LabRow.exact("pushback 300", "2 arrivals, OK", first.count() + " arrivals, " + first.code(),
                        first.count() == 2 && first.ok(), "2 arrivals, success"));
                t.add(LabRow.range("  gap", "303 ms", ms(gap), gap >= 295 && gap <= 300 + 60,
                        "300 ms (+ < 60 ms), the shortest of 3 calls"));

                // three calls; the time is the best of three, so a scheduling hiccup does not count as a backoff
                int[] counts = new int[3];
                Status.Code[] codes = new Status.Code[3];
                double best = Double.MAX_VALUE;
                for (int i = 0; i < 3; i++) {
                    o = call(policy, server, Script.newBuilder().setFailFirst(5).setPushbackMs("-1").build());
                    counts[i] = o.count();
                    codes[i] = o.code();
                    best = Math.min(best, o.elapsedMs());
                }
                boolean allOne = java.util.Arrays.stream(counts).allMatch(c -> c == 1)
                        && java.util.Arrays.stream(codes).allMatch(c -> c == Status.Code.UNAVAILABLE);
                t.add(LabRow.exact("pushback -1 (3 calls)", "1 arrival, Unavailable",
                        java.util.Arrays.toString(counts).replace(",", "") + " arrival(s), " + codes[0], allOne,
                        "1 arrival each, UNAVAILABLE"));
                t.add(LabRow.range("  returned after (best of 3)", "1.3 ms", String.format(java.util.Locale.ROOT, "%.1f ms", best),
                        best < 40, "well under one backoff (< 40 ms)"));

                o = call(policy, server, failFirst(2), 100 * 1024, 10_000);
                t.add(LabRow.exact("request 100 KiB", "3 arrivals, OK", o.count() + " arrivals, " + o.code(),
                        o.count() == 3 && o.ok(), "3 arrivals, success"));

                o = call(client.channel("r1-buffer"), server, failFirst(2), 300 * 1024, 10_000);
                t.add(LabRow.exact("request 300 KiB, per-rpc-buffer-limit 256KB", "1 arrival, Unavailable (256 KiB limit)",
                        o.count() + " arrival(s), " + o.code(), o.count() == 1 && o.code() == Status.Code.UNAVAILABLE,
                        "1 arrival: over the limit the call is committed"));

                o = call(client.channel("r1-hedging"), server, Script.newBuilder().setFirstAttemptSleepMs(600).build());
                // grpc-go ignores hedgingPolicy; this starter (either engine) applies it: a rule, not the seed's figure
                t.add(LabRow.rule("hedgingPolicy (max-attempts 3, delay 100ms), first attempt takes 600 ms",
                        "ignored: 1 arrival, 605 ms, OK",
                        o.count() + " arrivals, " + o.code() + ", answered by attempt " + o.replyAttempt(),
                        o.ok() && o.count() >= 2 && o.replyAttempt() >= 2,
                        "hedging is applied (grpc-go ignores it): ≥ 2 arrivals, OK, answered by a hedge that overtook "
                                + "the slow first attempt"));
                t.add(LabRow.range("  call returned after", "605 ms", ms(o.elapsedMs()), o.elapsedMs() >= 95 && o.elapsedMs() < 450,
                        "about one hedging delay: 95–450 ms, well before 600 ms"));
            }
        }
        return t;
    }
}
