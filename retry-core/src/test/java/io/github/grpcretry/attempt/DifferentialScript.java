package io.github.grpcretry.attempt;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * One scenario of the differential test, made from a seed alone: a policy (retry, or hedging where
 * the first arrival decides the call before any hedge could be sent), an answer per arrival and what
 * the application does. The same seed always makes the same script, so a seed reproduces it.
 */
record DifferentialScript(long seed, Policy policy, List<Answer> answers, App app, Twist twist) {

    /** Codes the server answers with; the policy retries (or, hedging, forgives) a subset of the first three. */
    private static final Status.Code[] CODES = {Status.Code.UNAVAILABLE, Status.Code.RESOURCE_EXHAUSTED,
            Status.Code.ABORTED, Status.Code.INTERNAL, Status.Code.NOT_FOUND};
    private static final String[] VALID_PUSHBACK = {"0", "1", "3", "12"};
    private static final String[] MALFORMED_PUSHBACK = {"-1", "abc", "1.5", ""};

    /** The pushback of an answer a shut-down follows: far longer than the shut-down takes, shorter than a quiet time. */
    static final String SHUTDOWN_PUSHBACK = "100";

    /** Answers scripted per script: more than any policy's attempts, so every arrival has one. */
    static final int ANSWERS = 6;

    enum Method { UNARY, CLIENT_STREAMING, SERVER_STREAMING }

    /** What the application does besides sending and reading. */
    enum Fault { NONE, CANCEL, THROW }

    /**
     * The call's policy. {@code hedging}: maxAttempts hedges every {@code hedgingDelayMs} (long: the
     * first arrival decides), non-fatal = {@code codes}; otherwise retry of {@code codes} with the
     * backoff given. {@code throttleMaxTokens} 0 = no throttling.
     */
    record Policy(boolean hedging, int maxAttempts, long initialBackoffMs, long maxBackoffMs, double multiplier,
            Set<Status.Code> codes, int throttleMaxTokens, double throttleRatio) {

        /** The channel's configuration, with a per-call buffer limit of {@code perRpcBufferLimit} bytes. */
        ChannelRetryConfig channelConfig(long perRpcBufferLimit) {
            RetryThrottlingPolicy throttling = throttleMaxTokens == 0 ? null
                    : new RetryThrottlingPolicy(throttleMaxTokens, throttleRatio);
            Status.Code[] c = codes.toArray(new Status.Code[0]);
            return Configs.channel(hedging
                    ? Configs.hedged(Configs.hedging(maxAttempts, HEDGING_DELAY_MS, c), throttling)
                    : Configs.service(Configs.policy(maxAttempts, initialBackoffMs, maxBackoffMs, multiplier, c),
                            throttling), perRpcBufferLimit, ChannelRetryConfig.DEFAULT_RETRY_BUFFER_SIZE, null);
        }

        boolean retryable(Status.Code code) {
            return codes.contains(code);
        }

        @Override
        public String toString() {
            String p = hedging ? "hedging(" + maxAttempts + " x " + HEDGING_DELAY_MS + "ms, non-fatal " + codes + ")"
                    : "retry(" + maxAttempts + ", " + initialBackoffMs + "ms..." + maxBackoffMs + "ms x" + multiplier
                            + ", " + codes + ")";
            return throttleMaxTokens == 0 ? p : p + " throttle(" + throttleMaxTokens + ", " + throttleRatio + ")";
        }
    }

    /** The hedging delay: long enough that no hedge is sent before the first arrival has decided the call. */
    static final long HEDGING_DELAY_MS = 60_000;

    /**
     * How the server answers one arrival: OK after half-close with {@code messages} responses
     * (server streaming; unary and client streaming answer one), or {@code code} after
     * {@code messages} responses, either at once on arrival or after half-close, with response
     * headers first or not, with a {@code grpc-retry-pushback-ms} value or none. {@code pullOneByOne}:
     * the server asks for the request messages one at a time (so the client's readiness follows it),
     * otherwise for all at once.
     */
    record Answer(Status.Code code, int messages, boolean atArrival, boolean headersFirst, String pushback,
            boolean pullOneByOne) {

        boolean ok() {
            return code == Status.Code.OK;
        }

        boolean validPushback() {
            return pushback != null && pushback.matches("[0-9]+");
        }

        /** The same answer without its pushback. */
        Answer withoutPushback() {
            return new Answer(code, messages, atArrival, headersFirst, null, pullOneByOne);
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder(code.name());
            if (messages > 0) {
                b.append(" after ").append(messages).append(" msg");
            }
            if (!ok()) {
                b.append(atArrival ? " at arrival" : " after half-close");
            }
            if (headersFirst) {
                b.append(" headers-first");
            }
            if (pushback != null) {
                b.append(" pushback='").append(pushback).append('\'');
            }
            if (pullOneByOne) {
                b.append(" pull-1by1");
            }
            return b.toString();
        }
    }

    /**
     * What the application does: the method; {@code requests} request messages (sent at start, or
     * {@code onReadyWriter}: only while the call is ready, resumed in {@code onReady}); demand
     * {@code initialDemand} at start and {@code demandPerMessage} more after each response; a fault
     * fired from a callback on reaching {@code faultAfter} responses (0 = in {@code onHeaders}), or,
     * for a throw with {@code onReadyWriter}, in the first {@code onReady} after the writes.
     */
    record App(Method method, int requests, boolean onReadyWriter, int initialDemand, int demandPerMessage, Fault fault,
            int faultAfter, boolean throwInOnReady) {

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder(method.name().toLowerCase(java.util.Locale.ROOT));
            b.append(" ").append(requests).append(" req").append(onReadyWriter ? " (onReady-driven)" : "");
            b.append(", demand ").append(initialDemand).append(" +").append(demandPerMessage).append("/msg");
            if (fault == Fault.CANCEL) {
                b.append(", cancel after ").append(faultAfter).append(" msg");
            } else if (fault == Fault.THROW) {
                b.append(throwInOnReady ? ", throw in onReady" : ", throw after " + faultAfter + " msg");
            }
            return b.toString();
        }
    }

    /**
     * The other ways a call is driven, at most one per script: the request marshaller throws on message
     * {@code message}; the call below the engine (grpc-java: below its retry where it has such a place, its
     * stream; otherwise above it) throws from {@code sendMessage} of message {@code message}, from its second
     * {@code request} or from {@code halfClose}; the application sets the compression of each message
     * ({@code compressed}, bit i for message i); the channel is shut down ({@code shutdown()} or
     * {@code shutdownNow()}) when arrival {@code arrival} comes ({@code atArrival}) or right after the server
     * closed it; a per-call buffer limit of {@code limit} bytes.
     */
    enum TwistKind {
        NONE, MARSHALLER_THROWS, BELOW_THROWS_SEND, BELOW_THROWS_REQUEST, BELOW_THROWS_HALF_CLOSE, COMPRESSION,
        SHUTDOWN, SHUTDOWN_NOW, BUFFER_LIMIT
    }

    record Twist(TwistKind kind, int message, int compressed, int arrival, boolean atArrival, long limit) {

        static final Twist NONE = new Twist(TwistKind.NONE, 0, 0, 0, false, 0);

        boolean is(TwistKind k) {
            return kind == k;
        }

        boolean shutdown() {
            return kind == TwistKind.SHUTDOWN || kind == TwistKind.SHUTDOWN_NOW;
        }

        @Override
        public String toString() {
            return switch (kind) {
                case NONE -> "";
                case MARSHALLER_THROWS, BELOW_THROWS_SEND -> "; " + kind + " on q" + message;
                case BELOW_THROWS_REQUEST, BELOW_THROWS_HALF_CLOSE -> "; " + kind;
                case COMPRESSION -> "; compression per message " + Integer.toBinaryString(compressed);
                case SHUTDOWN, SHUTDOWN_NOW -> "; " + kind + (atArrival ? " at arrival " : " after the close of ")
                        + arrival;
                case BUFFER_LIMIT -> "; per-call buffer limit " + limit + " B";
            };
        }
    }

    /**
     * The script's twist, drawn from a generator of its own (the policy, answers and application of a seed stay
     * what they were before twists existed).
     */
    private static Twist twist(long seed, Policy policy, App app) {
        SplittableRandom r = new SplittableRandom(~seed);
        int pick = r.nextInt(20);
        TwistKind[] kinds = TwistKind.values();
        TwistKind kind = pick < 8 ? TwistKind.NONE : kinds[1 + (pick - 8) % (kinds.length - 1)];
        int message = app.requests() == 0 ? 0 : r.nextInt(app.requests());
        int compressed = r.nextInt(64);
        int arrival = 1 + r.nextInt(Math.min(3, policy.maxAttempts()));
        boolean atArrival = r.nextBoolean();
        long limit = 1 + r.nextInt(35);
        if (app.requests() == 0 && (kind == TwistKind.MARSHALLER_THROWS || kind == TwistKind.BELOW_THROWS_SEND)) {
            kind = TwistKind.NONE; // no message to throw on
        }
        return kind == TwistKind.NONE ? Twist.NONE : new Twist(kind, message, compressed, arrival, atArrival, limit);
    }

    static DifferentialScript generate(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        boolean hedging = r.nextInt(10) == 0;
        Set<Status.Code> codes = EnumSet.noneOf(Status.Code.class);
        codes.add(CODES[r.nextInt(3)]);
        if (r.nextBoolean()) {
            codes.add(CODES[r.nextInt(3)]);
        }
        boolean throttled = r.nextInt(4) == 0;
        Policy policy = new Policy(hedging, 2 + r.nextInt(5), 1 + r.nextInt(4), 5 + r.nextInt(8),
                r.nextBoolean() ? 1.0 : 2.0, codes, throttled ? 1 + r.nextInt(6) : 0,
                throttled ? (r.nextBoolean() ? 1.0 : 0.5) : 0);

        Method method = Method.values()[r.nextInt(3)];
        int maxResponses = method == Method.SERVER_STREAMING ? 4 : 1;
        List<Answer> answers = new ArrayList<>();
        for (int i = 0; i < ANSWERS; i++) {
            boolean pull = r.nextInt(4) == 0;
            boolean ok = r.nextInt(3) == 0;
            if (hedging && i == 0) { // the first arrival decides: OK or a fatal code
                ok = ok || codes.size() == 3;
            }
            if (ok) {
                answers.add(new Answer(Status.Code.OK, method == Method.SERVER_STREAMING ? r.nextInt(5) : 1, false,
                        false, null, pull));
                continue;
            }
            Status.Code code = CODES[r.nextInt(CODES.length)];
            while (hedging && i == 0 && codes.contains(code)) {
                code = CODES[r.nextInt(CODES.length)];
            }
            int after = r.nextInt(4) == 0 ? r.nextInt(maxResponses + 1) : 0;
            int p = r.nextInt(10);
            String pushback = p < 5 ? null : p < 8 ? VALID_PUSHBACK[r.nextInt(VALID_PUSHBACK.length)]
                    : MALFORMED_PUSHBACK[r.nextInt(MALFORMED_PUSHBACK.length)];
            answers.add(new Answer(code, after, r.nextBoolean(), after == 0 && r.nextInt(4) == 0, pushback, pull));
        }

        int requests = switch (method) {
            case CLIENT_STREAMING -> r.nextInt(5);
            default -> 1;
        };
        boolean writer = method != Method.UNARY && r.nextInt(3) == 0;
        if (writer && method == Method.CLIENT_STREAMING) {
            requests = 1 + r.nextInt(6);
        }
        int[] demands = {1, 2, 3, 100};
        int initialDemand = demands[r.nextInt(demands.length)];
        int perMessage = 1 + r.nextInt(2);
        int f = r.nextInt(10);
        Fault fault = f < 5 ? Fault.NONE : f < 8 ? Fault.CANCEL : Fault.THROW;
        int faultAfter = r.nextInt(maxResponses + 1);
        // a throw in the first onReady only where the first attempt is the one that becomes ready: when it fails
        // at once, whether any onReady comes depends on whether the retry started before the application's
        // first isReady() (an onReady count, not progress)
        boolean throwInOnReady = fault == Fault.THROW && writer && r.nextInt(3) == 0
                && (answers.get(0).ok() || !answers.get(0).atArrival());
        App app = new App(method, requests, writer, initialDemand, perMessage, fault, faultAfter, throwInOnReady);
        Twist twist = twist(seed, policy, app);
        if (twist.shutdown() && !twist.atArrival() && !answers.get(twist.arrival() - 1).ok()) {
            // the shut-down comes right after the server's close: a retry that close schedules must not race it (a
            // backoff's jitter or a pushback of 0 could send it first), so the answer pushes the retry back far
            // beyond the moment of the shut-down (and within the quiet time that tells a call that never closes)
            Answer a = answers.get(twist.arrival() - 1);
            answers.set(twist.arrival() - 1, new Answer(a.code(), a.messages(), a.atArrival(), a.headersFirst(),
                    SHUTDOWN_PUSHBACK, a.pullOneByOne()));
        }
        return new DifferentialScript(seed, policy, List.copyOf(answers), app, twist);
    }

    /** The answer to arrival {@code index} (1-based). */
    Answer answer(int index) {
        return answers.get(Math.min(index, ANSWERS) - 1);
    }

    /** This script with every answer replaced by {@code f}'s. */
    DifferentialScript mapAnswers(java.util.function.UnaryOperator<Answer> f) {
        return new DifferentialScript(seed, policy, answers.stream().map(f).toList(), app, twist);
    }

    /** This script with an application that writes all its requests at start instead of on readiness. */
    DifferentialScript eagerWriter() {
        return new DifferentialScript(seed, policy, answers, new App(app.method(), app.requests(), false,
                app.initialDemand(), app.demandPerMessage(), app.fault(), app.faultAfter(), app.throwInOnReady()), twist);
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("seed ").append(seed).append(": ").append(policy).append("; ")
                .append(app).append(twist).append("; arrivals [");
        for (int i = 0; i < answers.size(); i++) {
            b.append(i == 0 ? "" : " | ").append(i + 1).append(": ").append(answers.get(i));
        }
        return b.append(']').toString();
    }
}
