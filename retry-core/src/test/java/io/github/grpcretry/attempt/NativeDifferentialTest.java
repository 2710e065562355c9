package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.DifferentialRun.Observation;
import io.github.grpcretry.attempt.DifferentialScript.Answer;
import io.github.grpcretry.attempt.DifferentialScript.Fault;
import io.github.grpcretry.attempt.DifferentialScript.TwistKind;
import io.github.grpcretry.attempt.Engines.Engine;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The interceptor engine against grpc-java's own retry, the reference implementation of A6, over
 * seeded scripts ({@link DifferentialScript}): each runs on both engines (in-process, direct
 * executors, a fresh server and channel per run) and what the application and the server observed
 * must agree: arrivals, {@code grpc-previous-rpc-attempts} at the server and in the response headers the
 * application heard, the request messages each arrival read and whether it ended, the messages the application
 * wrote and received, its final code (or that the call never closed), the close's cause (the listener's, the
 * marshaller's or the call below's exception), what the application's own calls threw, and the callbacks that ran
 * without the call's {@code Context} value. Besides its policy, answers and application, a script may have one
 * twist ({@link DifferentialScript.TwistKind}): the marshaller throws on one message, the call below the engine
 * throws from {@code sendMessage}, {@code request} or {@code halfClose}, the application sets the compression of
 * each message (ours must hand each attempt every message with its own setting, checked below the engine), the
 * channel is shut down ({@code shutdown()} or {@code shutdownNow()}, at an arrival or right after the server closed
 * it, with the engine told of the channel for even seeds), or a per-call buffer limit of 1 to 35 bytes (retry-core's
 * surefire sets {@code GRPC_EXPERIMENTAL_SUPPORT_TRACING_MESSAGE_SIZES}, so the in-process transport reports what
 * each attempt wrote to both engines).
 *
 * <p>Handled by rule, not compared as they are:
 * <ul>
 * <li>docs/differences.md, row "pushback ≥ 0 on a status that is not retryable": our engine must do
 * what grpc-java does when that pushback is absent, so it is compared with grpc-java on the script
 * without it.</li>
 * <li>a call grpc-java never closes after the application cancelled it or its listener threw
 * (docs/differences.md, row "the application cancels (or its listener throws) while a retry replays, or
 * while its stream holds the server's close behind messages it did not request"; docs/reliability.md names
 * grpc-java's defect): our engine must close it once with CANCELLED (with the listener's exception as
 * cause when it threw), after the same arrivals and responses.</li>
 * <li>the same, where grpc-java also delivers messages after the cancel (a server-streaming call the application
 * cancels from a callback while it has asked for more: grpc-java hands over what it had asked for, then never closes;
 * docs/differences.md, row "a server-streaming call the application cancels from a callback while it has asked for
 * more messages"): our engine must
 * close it once with CANCELLED after the same arrivals, having delivered exactly the responses the application had
 * heard when it cancelled, which are grpc-java's first ones ({@code -Ddifferential.seed=7773396} is one).</li>
 * <li>an application that cancels after the server's status reached the client but before the
 * application heard it (docs/differences.md, row "the application cancels after the server's status
 * reached the client but before the application heard it"): grpc-java delivers that status, our engine
 * CANCELLED; the arrivals must agree and our responses be a prefix of grpc-java's.</li>
 * <li>an application that writes only while the call is ready, which grpc-java stalls when it loses the
 * {@code onReady} of a retried attempt (same section): our engine must do what grpc-java does for the
 * same application writing everything at once.</li>
 * <li>a {@code request} or {@code halfClose} that throws below the engine (docs/differences.md, row "the call
 * below the retry throws from {@code request} or {@code halfClose}"): see
 * {@link #requestOrHalfCloseThrewBelow}.</li>
 * <li>a message whose marshaller (or attempt's stream) throws as a retry replays it (docs/differences.md, row "a
 * message that fails as a retry replays it"): see {@link #replayedMessageFailed}.</li>
 * <li>a graceful {@code shutdown()} while a call still needs a retry (docs/differences.md, row "the channel is
 * shut down"): see {@link #gracefulShutdownStoppedTheRetries}.</li>
 * </ul>
 * Our engine never closing a call is a divergence even where grpc-java does not close it either.
 * Not generated: deadlines and per-attempt timeouts, several pushback values in one trailer
 * (docs/differences.md's row), hedges that timing decides (a hedging script's first arrival ends the call, OK or a
 * fatal code, before its next hedge is due), the channel-wide retry buffer (one call per channel), and a throw from
 * the first {@code onReady} where the first attempt fails at once (whether an {@code onReady} comes then is a matter
 * of when the retry starts, see {@link DifferentialScript#generate}).
 *
 * <p>{@code -Ddifferential.seed=S} runs the script of seed S alone; {@code -Ddifferential.scripts=N}
 * runs N scripts from {@code -Ddifferential.base} (default {@link #BASE_SEED}).
 */
class NativeDifferentialTest {

    static final long BASE_SEED = 20_261_202L;
    private static final int SCRIPTS = Integer.getInteger("differential.scripts", 2_000);
    /** No arrival and none open for this long: the call will not close (the scripts' waits are ≤ 24 ms). */
    private static final long QUIET_MS = 300;
    /** The confirmation of a call that seemed never to close, before it is reported. */
    private static final long CONFIRM_QUIET_MS = 3_000;
    private static final int PARALLEL = 6;
    /** {@code -Ddifferential.selfCheck=true}: grpc-java against itself, to show a script's outcome is not a race. */
    private static final boolean SELF_CHECK = Boolean.getBoolean("differential.selfCheck");

    private static RetryScheduler scheduler;

    @BeforeAll
    static void scheduler() {
        scheduler = RetryScheduler.create(2, "differential");
    }

    @AfterAll
    static void noTimerLeft() {
        assertThat(EngineTestAccess.outstandingTimers(scheduler)).as("timers outstanding after the scripts").isZero();
        scheduler.close();
    }

    /** How a script ended up. */
    enum Verdict {
        SAME, SAME_WITHOUT_PUSHBACK_ON_NON_RETRYABLE, NATIVE_LOSES_ON_READY, NATIVE_NEVER_CLOSES_CANCELLED_CALL,
        NATIVE_DELIVERS_AFTER_CANCEL_AND_NEVER_CLOSES, CANCELLED_AFTER_THE_STATUS_ARRIVED,
        REQUEST_OR_HALF_CLOSE_THROWS_BELOW, NATIVE_NEVER_CLOSES_WHEN_A_REPLAYED_MESSAGE_FAILS,
        GRACEFUL_SHUTDOWN_NATIVE_STILL_RETRIES, DIVERGED
    }

    record Result(DifferentialScript script, Verdict verdict, Observation nativeEngine, Observation ours) {
    }

    @Test
    void interceptorEngineMatchesGrpcJavasRetry() throws Exception {
        String one = System.getProperty("differential.seed");
        long base = Long.getLong("differential.base", BASE_SEED);
        List<Long> seeds = new ArrayList<>();
        if (one != null && !one.isBlank()) {
            seeds.add(Long.parseLong(one.trim()));
        } else {
            for (int i = 0; i < SCRIPTS; i++) {
                seeds.add(base + i);
            }
        }
        long started = System.nanoTime();
        List<Result> results = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(PARALLEL, r -> {
            Thread t = new Thread(r, "differential-driver");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (long seed : seeds) {
                futures.add(pool.submit(() -> {
                    results.add(check(DifferentialScript.generate(seed)));
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(10, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

        AtomicInteger[] counts = new AtomicInteger[Verdict.values().length];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new AtomicInteger();
        }
        List<Result> diverged = new ArrayList<>();
        for (Result r : results) {
            counts[r.verdict().ordinal()].incrementAndGet();
            if (r.verdict() == Verdict.DIVERGED) {
                diverged.add(r);
            }
        }
        diverged.sort((a, b) -> Long.compare(a.script().seed(), b.script().seed()));
        StringBuilder summary = new StringBuilder("differential: " + results.size() + " scripts in " + millis + " ms;");
        for (Verdict v : Verdict.values()) {
            summary.append(' ').append(v).append('=').append(counts[v.ordinal()]);
        }
        int[] twists = new int[TwistKind.values().length];
        for (Result r : results) {
            twists[r.script().twist().kind().ordinal()]++;
        }
        summary.append("; twists:");
        for (TwistKind k : TwistKind.values()) {
            summary.append(' ').append(k).append('=').append(twists[k.ordinal()]);
        }
        System.out.println(summary);
        for (Result r : diverged) {
            System.out.println("diverged: " + r.script() + "\n  native: " + r.nativeEngine() + "\n  ours:   "
                    + r.ours());
        }
        StringBuilder report = new StringBuilder();
        for (Result r : diverged.subList(0, Math.min(diverged.size(), 15))) {
            report.append("\n\n").append(r.script()).append("\n  native: ").append(r.nativeEngine())
                    .append("\n  ours:   ").append(r.ours())
                    .append("\n  reproduce: ").append(command(r.script().seed()));
        }
        assertThat(diverged).as("%s; divergences (first 15 by seed):%s", summary, report).isEmpty();
    }

    static String command(long seed) {
        return "./mvnw -B -pl retry-core test -Dtest=NativeDifferentialTest -Dsurefire.failIfNoSpecifiedTests=false"
                + " -Ddifferential.seed=" + seed;
    }

    private static Result check(DifferentialScript script) throws Exception {
        Result r = compare(script, QUIET_MS);
        if (r.verdict() == Verdict.DIVERGED && (r.nativeEngine().neverClosed() || r.ours().neverClosed())) {
            r = compare(script, CONFIRM_QUIET_MS); // a slow machine, or a call that really never closes
        }
        return r;
    }

    private static Result compare(DifferentialScript script, long quietMillis) throws Exception {
        DifferentialScript reference = script;
        Verdict agreed = Verdict.SAME;
        if (pushbackOnNonRetryable(script)) {
            reference = script.mapAnswers(a -> a.ok() || script.policy().retryable(a.code()) ? a : a.withoutPushback());
            agreed = Verdict.SAME_WITHOUT_PUSHBACK_ON_NON_RETRYABLE;
        }
        Observation nat = DifferentialRun.run(reference, Engine.NATIVE, scheduler, quietMillis);
        Observation ours = SELF_CHECK ? DifferentialRun.run(reference, Engine.NATIVE, scheduler, quietMillis)
                : DifferentialRun.run(script, Engine.INTERCEPTOR, scheduler, quietMillis);
        boolean oursSound = ours.contractProblems().isEmpty() && (SELF_CHECK || !ours.neverClosed());
        if (oursSound && ours.equals(nat)) {
            return new Result(script, agreed, nat, ours);
        }
        if (oursSound && nat.neverClosed() && script.app().onReadyWriter()) {
            // grpc-java may give a retried attempt no onReady: the same application writing at once is the reference
            Observation eager = DifferentialRun.run(reference.eagerWriter(), Engine.NATIVE, scheduler, quietMillis);
            if (ours.equals(eager)) {
                return new Result(script, Verdict.NATIVE_LOSES_ON_READY, eager, ours);
            }
            nat = eager;
        }
        if (oursSound && nat.neverClosed() && script.app().fault() != Fault.NONE && "CANCELLED".equals(ours.code())
                && ours.causeIsApplicationFault() == (script.app().fault() == Fault.THROW)
                && withoutEnds(ours.arrivals()).equals(withoutEnds(nat.arrivals()))
                && ours.responses().equals(nat.responses())) {
            return new Result(script, Verdict.NATIVE_NEVER_CLOSES_CANCELLED_CALL, nat, ours);
        }
        if (oursSound && nat.neverClosed() && script.app().fault() == Fault.CANCEL && "CANCELLED".equals(ours.code())
                && withoutEnds(ours.arrivals()).equals(withoutEnds(nat.arrivals()))
                && ours.responses().size() == script.app().faultAfter()
                && nat.responses().size() > ours.responses().size()
                && nat.responses().subList(0, ours.responses().size()).equals(ours.responses())) {
            // grpc-java delivers the messages the application had asked for before it cancelled: ours are exactly
            // the ones it had heard when it cancelled, grpc-java's first ones
            return new Result(script, Verdict.NATIVE_DELIVERS_AFTER_CANCEL_AND_NEVER_CLOSES, nat, ours);
        }
        if (oursSound && (script.twist().is(TwistKind.BELOW_THROWS_REQUEST)
                || script.twist().is(TwistKind.BELOW_THROWS_HALF_CLOSE)) && requestOrHalfCloseThrewBelow(nat, ours)) {
            return new Result(script, Verdict.REQUEST_OR_HALF_CLOSE_THROWS_BELOW, nat, ours);
        }
        if (oursSound && (script.twist().is(TwistKind.MARSHALLER_THROWS) || script.twist().is(TwistKind.BELOW_THROWS_SEND))
                && replayedMessageFailed(script, nat, ours)) {
            return new Result(script, Verdict.NATIVE_NEVER_CLOSES_WHEN_A_REPLAYED_MESSAGE_FAILS, nat, ours);
        }
        if (oursSound && script.twist().is(TwistKind.SHUTDOWN) && gracefulShutdownStoppedTheRetries(nat, ours)) {
            return new Result(script, Verdict.GRACEFUL_SHUTDOWN_NATIVE_STILL_RETRIES, nat, ours);
        }
        if (oursSound && script.app().fault() == Fault.CANCEL && "CANCELLED".equals(ours.code())
                && !nat.neverClosed() && !"CANCELLED".equals(nat.code())
                && ours.arrivals().equals(nat.arrivals())
                && nat.responses().subList(0, Math.min(ours.responses().size(), nat.responses().size()))
                        .equals(ours.responses())) {
            return new Result(script, Verdict.CANCELLED_AFTER_THE_STATUS_ARRIVED, nat, ours);
        }
        return new Result(script, Verdict.DIVERGED, nat, ours);
    }

    /**
     * docs/differences.md, row "the call below the retry throws from {@code request} or {@code halfClose}": grpc-java
     * has nothing below its retry that takes these, so its control throws them above it, to the application, and
     * leaves the stream as it was (its call may then never close); ours cancels the attempt whose call threw and
     * ends the call {@code CANCELLED} with that exception as the cause, nothing retried. What ours did must be what
     * grpc-java did up to the throw: the same arrivals as far as ours went (every one of ours ended), the responses a
     * prefix of grpc-java's, nothing thrown to the application. Or, where the operation never reached the call
     * below ours (a demand asked for after the attempt's close had arrived), the same observation but what
     * grpc-java's application caught.
     */
    private static boolean requestOrHalfCloseThrewBelow(Observation nat, Observation ours) {
        if (!nat.thrownToApplication().contains("below") || !ours.thrownToApplication().isEmpty()) {
            return false;
        }
        if (ours.equals(new Observation(nat.arrivals(), nat.written(), nat.headers(), nat.headerAttempts(),
                nat.responses(), nat.code(), nat.cause(), List.of(), nat.contextLost(), nat.contractProblems()))) {
            return true;
        }
        List<String> natArrivals = withoutEnds(nat.arrivals());
        return "CANCELLED".equals(ours.code()) && "below".equals(ours.cause())
                && ours.arrivals().stream().noneMatch(a -> a.endsWith(", OPEN)"))
                && ours.arrivals().size() <= natArrivals.size()
                && natArrivals.subList(0, ours.arrivals().size()).equals(ours.arrivals())
                && ours.responses().size() <= nat.responses().size()
                && nat.responses().subList(0, ours.responses().size()).equals(ours.responses())
                && ours.contextLost().isEmpty();
    }

    /**
     * docs/differences.md, row "a message that fails as a retry replays it": where the first attempt failed before
     * the application's message was sent, grpc-java replays it into the retry on its timer's thread; when the
     * marshaller (or the attempt's stream) throws there, the exception leaves that thread and the call is never
     * closed, the retry's server call left open without the message (or, where the server answered that retry at
     * once, its answer delivered in part). Ours must have made the same arrivals, every one ended, and either end
     * the call {@code CANCELLED} with that exception as the cause and grpc-java's responses, or, where the server
     * answered the last arrival before it read a message (so that attempt closed before its message could fail),
     * deliver that answer: its code and all its responses, of which grpc-java's are the first.
     */
    private static boolean replayedMessageFailed(DifferentialScript script, Observation nat, Observation ours) {
        if (!nat.neverClosed() || nat.arrivals().size() < 2 || !withoutEnds(ours.arrivals()).equals(
                withoutEnds(nat.arrivals())) || ours.arrivals().stream().anyMatch(a -> a.endsWith(", OPEN)"))
                || !ours.thrownToApplication().isEmpty() || !nat.thrownToApplication().isEmpty()
                || !ours.contextLost().isEmpty()) {
            return false;
        }
        if ("CANCELLED".equals(ours.code()) && ("marshaller".equals(ours.cause()) || "below".equals(ours.cause()))) {
            return ours.responses().equals(nat.responses());
        }
        Answer last = script.answer(ours.arrivals().size());
        return !last.ok() && last.atArrival() && last.code().name().equals(ours.code()) && ours.cause() == null
                && ours.arrivals().get(ours.arrivals().size() - 1).contains("read=[]")
                && ours.responses().size() == last.messages() && nat.responses().size() <= ours.responses().size()
                && ours.responses().subList(0, nat.responses().size()).equals(nat.responses());
    }

    /**
     * docs/differences.md, row "the channel is shut down": after a graceful {@code shutdown()} grpc-java still sends
     * the retries a call started before needs; an interceptor cannot (its new call on a shut-down channel fails), so
     * ours ends the call {@code UNAVAILABLE} where grpc-java retried. What ours did must be what grpc-java did up to
     * the shut-down: its arrivals a strict prefix of grpc-java's (every one ended), its responses a prefix of
     * grpc-java's.
     */
    private static boolean gracefulShutdownStoppedTheRetries(Observation nat, Observation ours) {
        List<String> natArrivals = withoutEnds(nat.arrivals());
        return "UNAVAILABLE".equals(ours.code()) && ours.arrivals().size() < natArrivals.size()
                && ours.arrivals().stream().noneMatch(a -> a.endsWith(", OPEN)"))
                && natArrivals.subList(0, ours.arrivals().size()).equals(ours.arrivals())
                && ours.responses().size() <= nat.responses().size()
                && nat.responses().subList(0, ours.responses().size()).equals(ours.responses())
                && ours.thrownToApplication().isEmpty() && ours.contextLost().isEmpty();
    }

    /** Arrivals without how each ended (an engine that never closes the call may leave its attempt open). */
    private static List<String> withoutEnds(List<String> arrivals) {
        return arrivals.stream().map(a -> a.replace(", OPEN)", ")")).toList();
    }

    /** A retry script with a valid pushback on a status its policy does not retry. */
    private static boolean pushbackOnNonRetryable(DifferentialScript script) {
        if (script.policy().hedging()) {
            return false;
        }
        for (Answer a : script.answers()) {
            if (!a.ok() && a.validPushback() && !script.policy().retryable(a.code())) {
                return true;
            }
        }
        return false;
    }
}
