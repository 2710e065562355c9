package io.github.grpcretry.sample.server;

import io.github.grpcretry.sample.proto.Script;
import io.grpc.Status;
import java.util.SplittableRandom;

/**
 * Decides how the flaky server answers one attempt of a logical call, from the caller's {@link Script}.
 * Random failures and slow attempts come from one seeded generator, so a run of sequential calls is
 * repeatable.
 */
public final class FaultScript {

    private final SplittableRandom random;
    /** A sleep this server adds to every attempt, whatever the script says (a slow backend). */
    private final long extraSleepMs;

    public FaultScript(long seed) {
        this(seed, 0);
    }

    /** A server that also sleeps {@code extraSleepMs} before every answer (a slow backend among fast ones). */
    public FaultScript(long seed, long extraSleepMs) {
        this.random = new SplittableRandom(seed);
        this.extraSleepMs = extraSleepMs;
    }

    /** The outcome of one attempt: {@code null} status means success. */
    public record Decision(Status failure, boolean headersFirst, String pushbackMs, long sleepMs) {
        public boolean fails() {
            return failure != null;
        }
    }

    /**
     * @param attempt 1-based attempt number of this logical call as the server counts it
     */
    public Decision decide(Script script, int attempt) {
        long sleep = extraSleepMs + script.getSleepMs() + (attempt == 1 ? script.getFirstAttemptSleepMs() : 0);
        if (script.getSlowProbability() > 0 && draw() < script.getSlowProbability()) {
            sleep += script.getSlowMs();
        }
        boolean fail = attempt <= script.getFailFirst();
        if (!fail && script.getFailProbability() > 0) {
            fail = draw() < script.getFailProbability();
        }
        if (!fail) {
            return new Decision(null, false, null, sleep);
        }
        Status.Code code = script.getCode() == 0 ? Status.Code.UNAVAILABLE : Status.fromCodeValue(script.getCode()).getCode();
        String pushback = script.getPushbackMs().isEmpty() ? null : script.getPushbackMs();
        return new Decision(Status.fromCode(code).withDescription("scripted failure of attempt " + attempt),
                script.getHeadersBeforeFailure(), pushback, sleep);
    }

    private double draw() {
        synchronized (random) {
            return random.nextDouble();
        }
    }
}
