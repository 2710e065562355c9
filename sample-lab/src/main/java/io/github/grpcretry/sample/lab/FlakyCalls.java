package io.github.grpcretry.sample.lab;

import com.google.protobuf.ByteString;
import io.github.grpcretry.sample.proto.FlakyGrpc;
import io.github.grpcretry.sample.proto.FlakyReply;
import io.github.grpcretry.sample.proto.FlakyRequest;
import io.github.grpcretry.sample.proto.Script;
import io.github.grpcretry.sample.server.ArrivalLog;
import io.github.grpcretry.sample.server.FlakyServer;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** Blocking calls to the flaky server through a channel, with what the server saw of each. */
public final class FlakyCalls {

    private static final AtomicLong KEYS = new AtomicLong();

    private FlakyCalls() {
    }

    /** The result of one logical call. */
    public record Outcome(Status.Code code, int replyAttempt, long elapsedNanos, List<ArrivalLog.Arrival> arrivals) {

        public int count() {
            return arrivals.size();
        }

        public boolean ok() {
            return code == Status.Code.OK;
        }

        public double elapsedMs() {
            return elapsedNanos / 1e6;
        }

        /** Gaps between consecutive arrivals, in ms. */
        public List<Double> gapsMs() {
            List<Double> gaps = new ArrayList<>();
            for (int i = 1; i < arrivals.size(); i++) {
                gaps.add((arrivals.get(i).nanoTime() - arrivals.get(i - 1).nanoTime()) / 1e6);
            }
            return gaps;
        }

        /** The grpc-previous-rpc-attempts header of each arrival ("none" when absent). */
        public List<String> previousHeaders() {
            return arrivals.stream().map(a -> a.previousAttempts() < 0 ? "none" : Integer.toString(a.previousAttempts())).toList();
        }
    }

    public static String newKey(String prefix) {
        return prefix + "-" + KEYS.incrementAndGet();
    }

    public static Outcome call(Channel channel, FlakyServer server, Script script, int payloadBytes, long deadlineMs) {
        String key = newKey("k");
        FlakyRequest.Builder request = FlakyRequest.newBuilder().setKey(key).setScript(script);
        if (payloadBytes > 0) {
            request.setPayload(ByteString.copyFrom(new byte[payloadBytes]));
        }
        long start = System.nanoTime();
        Status.Code code;
        int replyAttempt = 0;
        try {
            FlakyReply reply = FlakyGrpc.newBlockingStub(channel).withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS)
                    .call(request.build());
            code = Status.Code.OK;
            replyAttempt = reply.getAttempt();
        } catch (StatusRuntimeException e) {
            code = e.getStatus().getCode();
        }
        long elapsed = System.nanoTime() - start;
        // the server records an arrival before it answers, so every arrival of this call is in the log now
        return new Outcome(code, replyAttempt, elapsed, server == null ? List.of() : server.arrivals().arrivals(key));
    }

    public static Outcome call(Channel channel, FlakyServer server, Script script) {
        return call(channel, server, script, 0, 10_000);
    }

    public static Script failFirst(int n) {
        return Script.newBuilder().setFailFirst(n).build();
    }

    public static Script failWith(double p) {
        return Script.newBuilder().setFailProbability(p).build();
    }

    public static String pct(double fraction) {
        return String.format(java.util.Locale.ROOT, "%.1f %%", fraction * 100);
    }

    public static String ratio(double r) {
        return String.format(java.util.Locale.ROOT, "%.3f", r);
    }

    public static String ms(double ms) {
        return String.format(java.util.Locale.ROOT, "%.0f ms", ms);
    }
}
