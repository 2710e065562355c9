package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.Decision.End;
import io.github.grpcretry.attempt.Decision.Failure;
import io.github.grpcretry.attempt.Decision.Hedge;
import io.github.grpcretry.attempt.Decision.Retry;
import io.github.grpcretry.attempt.Decision.Stop;
import io.github.grpcretry.attempt.Decision.Verdict;
import io.github.grpcretry.budget.BudgetClocks;
import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.internal.commit.CallBuffer;
import io.github.grpcretry.internal.commit.RetryBufferPool;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.internal.pushback.Pushback;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.Metadata;
import io.grpc.Status;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The engine's decisions on their own, without a channel: every retry and hedging rule of the engine
 * (retryable codes, pushback values, the attempt cap, the deadline, the throttle and the budget, the
 * buffer limit and the commitment), as the pure functions of {@link Decision} compute them, and the
 * A6 order the calls apply them in (record the failure with the throttle first, then decide, then
 * withdraw from the budget).
 */
class DecisionTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long NO_DEADLINE = Decision.NO_DEADLINE;
    /** 100 ms initial backoff, ×2, at most 1 s, UNAVAILABLE retryable. */
    private static final RetryPolicy POLICY = policy(Duration.ofMillis(100), Duration.ofSeconds(1), 2);

    private static RetryPolicy policy(Duration initial, Duration max, double multiplier) {
        return new RetryPolicy(4, initial, max, multiplier, Set.of(Status.Code.UNAVAILABLE), null);
    }

    /** {@link Pushback#parse} of a trailer with these {@code grpc-retry-pushback-ms} values (none: absent). */
    private static long pushback(String... values) {
        Metadata trailers = new Metadata();
        for (String v : values) {
            trailers.put(Pushback.KEY, v);
        }
        return Pushback.parse(trailers);
    }

    private static Failure failure(Status.Code code, long pushback) {
        return Decision.classify(POLICY, code, false, pushback, Decision.NO_SERVER_DELAY, 0, 1.0);
    }

    // ---------------------------------------------------------------- retry policy

    @Test
    void aRetryableCodeWaitsTheBackoffAndAnotherCodeIsNotRetried() {
        assertThat(failure(Status.Code.UNAVAILABLE, Pushback.ABSENT))
                .isEqualTo(new Failure(Verdict.RETRYABLE, 100 * MS, 1, DelaySource.POLICY));
        for (Status.Code code : Status.Code.values()) {
            if (code != Status.Code.UNAVAILABLE) {
                Failure f = failure(code, Pushback.ABSENT);
                assertThat(f.verdict()).as(code.name()).isEqualTo(Verdict.NOT_RETRYABLE);
                assertThat(f.qualifies()).as(code + " costs no throttle token").isFalse();
            }
        }
        assertThat(failure(Status.Code.UNAVAILABLE, Pushback.ABSENT).qualifies()).isTrue();
    }

    @Test
    void aPerAttemptTimeoutIsRetryableWhateverTheCodes() {
        Failure f = Decision.classify(POLICY, Status.Code.DEADLINE_EXCEEDED, true, Pushback.ABSENT, Decision.NO_SERVER_DELAY, 0, 1.0);
        assertThat(f.verdict()).isEqualTo(Verdict.RETRYABLE);
        assertThat(Decision.classify(POLICY, Status.Code.DEADLINE_EXCEEDED, false, Pushback.ABSENT, Decision.NO_SERVER_DELAY, 0, 1.0)
                .verdict()).as("the call's own deadline is not retried").isEqualTo(Verdict.NOT_RETRYABLE);
    }

    @Test
    void negativeMalformedOrRepeatedPushbackStopsRetryableCode() {
        for (long stop : new long[] {pushback("-1"), pushback("-100"), pushback("abc"), pushback("1.5"),
                pushback(""), pushback("2147483648"), pushback("10", "20")}) {
            Failure f = failure(Status.Code.UNAVAILABLE, stop);
            assertThat(f.verdict()).isEqualTo(Verdict.PUSHBACK_STOP);
            assertThat(f.qualifies()).as("a stop costs a throttle token").isTrue();
            assertThat(Decision.afterRetryFailure(f, true, 1, 4, NO_DEADLINE))
                    .isEqualTo(new Stop(SuppressionReason.PUSHBACK));
        }
        assertThat(failure(Status.Code.INTERNAL, pushback("-1")).verdict())
                .as("a stop on a non-retryable status is a stop too").isEqualTo(Verdict.PUSHBACK_STOP);
    }

    @Test
    void aPushbackDelayReplacesTheBackoffAndRestartsIt() {
        Failure f = Decision.classify(POLICY, Status.Code.UNAVAILABLE, false, pushback("300"), Decision.NO_SERVER_DELAY, 3, 1.2);
        assertThat(f).isEqualTo(new Failure(Verdict.RETRYABLE, 300 * MS, 0, DelaySource.PUSHBACK));
        assertThat(failure(Status.Code.UNAVAILABLE, pushback("0")).delayNanos()).isZero();
        assertThat(failure(Status.Code.UNAVAILABLE, pushback("2147483647")).delayNanos())
                .isEqualTo(2147483647L * MS);
    }

    @Test
    void aPushbackDelayDoesNotForceARetryThePolicyForbids() {
        // deliberate difference from grpc-java (as grpc-go): the server may delay a retry, not force one
        assertThat(failure(Status.Code.INTERNAL, pushback("10")).verdict()).isEqualTo(Verdict.NOT_RETRYABLE);
        assertThat(Decision.afterRetryFailure(failure(Status.Code.INTERNAL, pushback("10")), true, 1, 4,
                NO_DEADLINE)).isEqualTo(new Stop(SuppressionReason.NON_RETRYABLE_STATUS));
    }

    @Test
    void theBackoffGrowsByTheMultiplierUpToTheMaximumTimesTheJitter() {
        assertThat(Decision.backoffNanos(POLICY, 0, 1.0)).isEqualTo(100 * MS);
        assertThat(Decision.backoffNanos(POLICY, 1, 1.0)).isEqualTo(200 * MS);
        assertThat(Decision.backoffNanos(POLICY, 3, 1.0)).isEqualTo(800 * MS);
        assertThat(Decision.backoffNanos(POLICY, 4, 1.0)).as("capped").isEqualTo(1000 * MS);
        assertThat(Decision.backoffNanos(POLICY, 40, 1.0)).isEqualTo(1000 * MS);
        assertThat(Decision.backoffNanos(POLICY, 0, 0.8)).isEqualTo(80 * MS);
        assertThat(Decision.backoffNanos(POLICY, 4, 1.2)).isEqualTo(1200 * MS);
        assertThat(Decision.classify(POLICY, Status.Code.UNAVAILABLE, false, Pushback.ABSENT, Decision.NO_SERVER_DELAY, 2, 1.0))
                .as("the step goes on").isEqualTo(new Failure(Verdict.RETRYABLE, 400 * MS, 3, DelaySource.POLICY));
    }

    @Test
    void backoffsPastTheLongRangeSaturate() {
        RetryPolicy huge = policy(Duration.ofSeconds(Long.MAX_VALUE), Duration.ofSeconds(Long.MAX_VALUE), 2);
        assertThat(Decision.backoffNanos(huge, 5, 1.0)).isEqualTo(Long.MAX_VALUE);
        RetryPolicy nan = policy(Duration.ofMillis(100), Duration.ofSeconds(1), Double.NaN);
        assertThat(Decision.backoffNanos(nan, 2, 1.0)).as("a multiplier that is not a number gives max")
                .isEqualTo(1000 * MS);
    }

    @Test
    void theAttemptCapComesBeforeTheThrottleAndTheDeadline() {
        Failure f = failure(Status.Code.UNAVAILABLE, Pushback.ABSENT);
        assertThat(Decision.afterRetryFailure(f, false, 4, 4, 1)).isEqualTo(new Stop(SuppressionReason.MAX_ATTEMPTS));
        assertThat(Decision.afterRetryFailure(f, true, 5, 4, NO_DEADLINE))
                .isEqualTo(new Stop(SuppressionReason.MAX_ATTEMPTS));
        assertThat(Decision.afterRetryFailure(f, true, 3, 4, NO_DEADLINE)).isEqualTo(new Retry(100 * MS, 1, DelaySource.POLICY));
    }

    @Test
    void aThrottleAtItsThresholdRefusesBeforeTheDeadline() {
        Failure f = failure(Status.Code.UNAVAILABLE, Pushback.ABSENT);
        assertThat(Decision.afterRetryFailure(f, false, 1, 4, 1)).isEqualTo(new Stop(SuppressionReason.THROTTLED));
    }

    @Test
    void aDelayThatReachesTheDeadlineStopsAtOnce() {
        Failure f = failure(Status.Code.UNAVAILABLE, Pushback.ABSENT); // 100 ms
        assertThat(Decision.afterRetryFailure(f, true, 1, 4, 100 * MS)).isEqualTo(new Stop(SuppressionReason.DEADLINE));
        assertThat(Decision.afterRetryFailure(f, true, 1, 4, 0)).isEqualTo(new Stop(SuppressionReason.DEADLINE));
        assertThat(Decision.afterRetryFailure(f, true, 1, 4, -5)).isEqualTo(new Stop(SuppressionReason.DEADLINE));
        assertThat(Decision.afterRetryFailure(f, true, 1, 4, 100 * MS + 1)).isEqualTo(new Retry(100 * MS, 1, DelaySource.POLICY));
        Failure forever = new Failure(Verdict.RETRYABLE, Long.MAX_VALUE, 7, DelaySource.POLICY);
        assertThat(Decision.afterRetryFailure(forever, true, 1, 4, NO_DEADLINE))
                .as("without a deadline any delay may be waited").isEqualTo(new Retry(Long.MAX_VALUE, 7, DelaySource.POLICY));
    }

    // ---------------------------------------------------------------- retry decider

    @Test
    void theDecidersAnswerIsTheVerdictAndTheDelay() {
        assertThat(Decision.classify(250 * MS, Pushback.ABSENT, Decision.NO_SERVER_DELAY)).isEqualTo(new Failure(Verdict.RETRYABLE, 250 * MS, 0, DelaySource.POLICY));
        assertThat(Decision.classify(0, Pushback.ABSENT, Decision.NO_SERVER_DELAY)).isEqualTo(new Failure(Verdict.RETRYABLE, 0, 0, DelaySource.POLICY));
        Failure notRetryable = Decision.classify(Decision.DECIDER_NOT_RETRYABLE, Pushback.ABSENT, Decision.NO_SERVER_DELAY);
        assertThat(notRetryable.verdict()).isEqualTo(Verdict.NOT_RETRYABLE);
        assertThat(notRetryable.qualifies()).isFalse();
        assertThat(Decision.classify(-7, Pushback.ABSENT, Decision.NO_SERVER_DELAY).verdict()).as("any other negative answer")
                .isEqualTo(Verdict.NOT_RETRYABLE);
        Failure exhausted = Decision.classify(Decision.DECIDER_EXHAUSTED, Pushback.ABSENT, Decision.NO_SERVER_DELAY);
        assertThat(exhausted.verdict()).isEqualTo(Verdict.EXHAUSTED);
        assertThat(exhausted.qualifies()).as("a retryable failure: it costs a token").isTrue();
        assertThat(Decision.afterRetryFailure(exhausted, true, 1, 5, NO_DEADLINE))
                .isEqualTo(new Stop(SuppressionReason.MAX_ATTEMPTS));
        assertThat(Decision.afterRetryFailure(notRetryable, true, 1, 5, NO_DEADLINE))
                .isEqualTo(new Stop(SuppressionReason.NON_RETRYABLE_STATUS));
    }

    @Test
    void thePushbackStillRulesOverTheDecider() {
        assertThat(Decision.classify(250 * MS, pushback("40"), Decision.NO_SERVER_DELAY)).isEqualTo(new Failure(Verdict.RETRYABLE, 40 * MS, 0, DelaySource.PUSHBACK));
        assertThat(Decision.classify(250 * MS, pushback("-1"), Decision.NO_SERVER_DELAY).verdict()).isEqualTo(Verdict.PUSHBACK_STOP);
        assertThat(Decision.classify(Decision.DECIDER_NOT_RETRYABLE, pushback("40"), Decision.NO_SERVER_DELAY).verdict())
                .isEqualTo(Verdict.NOT_RETRYABLE);
    }

    @Test
    void theEnginesOwnChecksStillRefuse() {
        Failure f = Decision.classify(10 * MS, Pushback.ABSENT, Decision.NO_SERVER_DELAY);
        assertThat(Decision.afterRetryFailure(f, true, 3, 3, NO_DEADLINE))
                .isEqualTo(new Stop(SuppressionReason.MAX_ATTEMPTS));
        assertThat(Decision.afterRetryFailure(f, false, 1, 3, NO_DEADLINE))
                .isEqualTo(new Stop(SuppressionReason.THROTTLED));
        assertThat(Decision.afterRetryFailure(f, true, 1, 3, 10 * MS)).isEqualTo(new Stop(SuppressionReason.DEADLINE));
    }

    // ---------------------------------------------------------------- throttle and budget

    @Test
    void aQualifiedFailureCostsATokenTheLastAttemptsToo() {
        RetryThrottle throttle = new RetryThrottle(new RetryThrottlingPolicy(10, 0.1));
        // the A6 order: the failure is recorded first, then the decision reads whether a retry is allowed
        Failure last = failure(Status.Code.UNAVAILABLE, Pushback.ABSENT);
        boolean allowed = Decision.record(throttle, last.qualifies());
        assertThat(throttle.tokens()).isEqualTo(9.0);
        assertThat(Decision.afterRetryFailure(last, allowed, 4, 4, NO_DEADLINE))
                .isEqualTo(new Stop(SuppressionReason.MAX_ATTEMPTS));
        assertThat(Decision.record(throttle, failure(Status.Code.UNAVAILABLE, pushback("-1")).qualifies())).isTrue();
        assertThat(throttle.tokens()).as("a pushback stop").isEqualTo(8.0);
        assertThat(Decision.record(throttle, failure(Status.Code.INTERNAL, Pushback.ABSENT).qualifies())).isTrue();
        assertThat(throttle.tokens()).as("a non-retryable status costs nothing").isEqualTo(8.0);
        assertThat(Decision.record(null, true)).as("no throttle: allowed").isTrue();
    }

    @Test
    void retriesAreAllowedOnlyWhileTokensStayAboveHalf() {
        RetryThrottle throttle = new RetryThrottle(new RetryThrottlingPolicy(10, 0.1));
        for (int i = 0; i < 4; i++) {
            assertThat(Decision.record(throttle, true)).as("token " + (9 - i)).isTrue();
        }
        assertThat(Decision.record(throttle, true)).as("5 left: at the threshold").isFalse();
        Failure f = failure(Status.Code.UNAVAILABLE, Pushback.ABSENT);
        assertThat(Decision.afterRetryFailure(f, false, 1, 4, NO_DEADLINE))
                .isEqualTo(new Stop(SuppressionReason.THROTTLED));
        assertThat(Decision.beforeHedge(NO_DEADLINE, throttle.isRetryAllowed()))
                .isEqualTo(new Stop(SuppressionReason.THROTTLED));
    }

    @Test
    void aRetryOrHedgeWithdrawsFromTheBudgetAndIsStoppedWhenItIsSpent() {
        long[] now = {0};
        RetryBudget budget = BudgetClocks.budget(new RetryBudgetPolicy(0.5, 0, Duration.ofSeconds(10)), () -> now[0]);
        budget.onCall();
        budget.onCall(); // two calls deposit one retry
        Retry retry = new Retry(5 * MS, 1, DelaySource.POLICY);
        assertThat(Decision.admit(retry, budget)).isSameAs(retry);
        assertThat(budget.retriesInWindow()).isEqualTo(1);
        assertThat(Decision.admit(new Hedge(0), budget)).isEqualTo(new Stop(SuppressionReason.BUDGET));
        assertThat(Decision.admit(retry, budget)).isEqualTo(new Stop(SuppressionReason.BUDGET));
        assertThat(budget.retriesInWindow()).as("a refusal withdraws nothing").isEqualTo(1);
        Stop stop = new Stop(SuppressionReason.DEADLINE);
        assertThat(Decision.admit(stop, budget)).as("only a retry or hedge withdraws").isSameAs(stop);
        assertThat(Decision.admit(retry, null)).as("no budget").isSameAs(retry);
        budget.onCall();
        budget.onCall();
        assertThat(Decision.admit(new Hedge(0), budget)).isEqualTo(new Hedge(0));
    }

    // ---------------------------------------------------------------- commit and buffer

    @Test
    void aFailureAfterCommitIsReportedWithTheCommitReason() {
        assertThat(Decision.afterCommit(null, true)).isEqualTo(SuppressionReason.COMMITTED);
        assertThat(Decision.afterCommit(SuppressionReason.COMMITTED, true)).isEqualTo(SuppressionReason.COMMITTED);
        assertThat(Decision.afterCommit(SuppressionReason.BUFFER_LIMIT, true))
                .isEqualTo(SuppressionReason.BUFFER_LIMIT);
        assertThat(Decision.afterCommit(SuppressionReason.BUFFER_LIMIT, false)).isNull();
        assertThat(Decision.afterCommit(null, false)).isNull();
    }

    @Test
    void aMessageThatPassesThePerRpcLimitOrThePoolIsNotHeld() {
        RetryBufferPool pool = new RetryBufferPool(1000);
        assertThat(CallBuffer.fits(0, 400, 500, pool)).isTrue();
        assertThat(pool.used()).isEqualTo(400);
        assertThat(CallBuffer.fits(400, 100, 500, pool)).as("exactly the limit").isTrue();
        assertThat(CallBuffer.fits(500, 1, 500, pool)).as("past the per-RPC limit").isFalse();
        assertThat(pool.used()).as("nothing reserved when refused").isEqualTo(500);
        assertThat(CallBuffer.fits(0, 501, 800, pool)).as("past the channel's pool").isFalse();
        assertThat(pool.used()).isEqualTo(500);
        pool.release(500);
        assertThat(pool.used()).isZero();
    }

    // ---------------------------------------------------------------- hedging

    private Decision afterFailure(boolean nonFatal, long pushback, boolean throttleAllows, boolean frozen,
            int attempts, int inFlight, long remaining) {
        return Decision.afterHedgeFailure(nonFatal, pushback, throttleAllows, frozen, attempts, 3, inFlight, remaining);
    }

    @Test
    void fatalStatusEndsCallAndNonFatalSendsNextHedgeAtOnce() {
        assertThat(afterFailure(false, Pushback.ABSENT, true, false, 1, 1, NO_DEADLINE))
                .isEqualTo(new End(SuppressionReason.NON_RETRYABLE_STATUS));
        assertThat(afterFailure(false, pushback("-1"), false, true, 3, 0, 0))
                .as("fatal comes first").isEqualTo(new End(SuppressionReason.NON_RETRYABLE_STATUS));
        assertThat(afterFailure(true, Pushback.ABSENT, true, false, 1, 1, NO_DEADLINE)).isEqualTo(new Hedge(0));
        assertThat(afterFailure(true, pushback("0"), true, false, 1, 0, NO_DEADLINE)).isEqualTo(new Hedge(0));
    }

    @Test
    void aQualifiedHedgingFailureIsANonFatalStatusOrAPushbackStop() {
        assertThat(Decision.qualifies(true, Pushback.ABSENT)).isTrue();
        assertThat(Decision.qualifies(false, pushback("-1"))).as("fatal, but the server said stop").isTrue();
        assertThat(Decision.qualifies(false, pushback("10"))).isFalse();
    }

    @Test
    void aPushbackStopOrAThrottleAtItsThresholdFreezesHedging() {
        assertThat(afterFailure(true, pushback("-1"), true, false, 1, 1, NO_DEADLINE))
                .isEqualTo(new Stop(SuppressionReason.PUSHBACK));
        assertThat(afterFailure(true, pushback("-1"), false, false, 1, 1, NO_DEADLINE))
                .as("the stop is the reason").isEqualTo(new Stop(SuppressionReason.PUSHBACK));
        assertThat(afterFailure(true, Pushback.ABSENT, false, false, 1, 1, NO_DEADLINE))
                .isEqualTo(new Stop(SuppressionReason.THROTTLED));
        assertThat(afterFailure(true, pushback("-1"), true, true, 1, 1, NO_DEADLINE))
                .as("frozen before: nothing new to report").isEqualTo(new Stop(null));
        assertThat(afterFailure(true, Pushback.ABSENT, false, true, 2, 0, NO_DEADLINE)).isEqualTo(new Stop(null));
    }

    @Test
    void theCapIsReportedOnceNothingIsInFlight() {
        assertThat(afterFailure(true, Pushback.ABSENT, true, false, 3, 1, NO_DEADLINE)).isEqualTo(new Stop(null));
        assertThat(afterFailure(true, Pushback.ABSENT, true, false, 3, 0, NO_DEADLINE))
                .isEqualTo(new Stop(SuppressionReason.MAX_ATTEMPTS));
        assertThat(afterFailure(true, Pushback.ABSENT, true, true, 3, 0, NO_DEADLINE))
                .as("frozen and capped").isEqualTo(new Stop(SuppressionReason.MAX_ATTEMPTS));
        assertThat(afterFailure(true, pushback("-1"), true, false, 3, 0, NO_DEADLINE))
                .isEqualTo(new Stop(SuppressionReason.PUSHBACK));
    }

    @Test
    void pushbackDelaySendsNextHedgeAfterItUnlessPastDeadline() {
        assertThat(afterFailure(true, pushback("250"), true, false, 1, 1, NO_DEADLINE)).isEqualTo(new Hedge(250 * MS));
        assertThat(afterFailure(true, pushback("250"), true, false, 1, 0, 251 * MS)).isEqualTo(new Hedge(250 * MS));
        assertThat(afterFailure(true, pushback("250"), true, false, 1, 0, 250 * MS))
                .isEqualTo(new Stop(SuppressionReason.DEADLINE));
        assertThat(afterFailure(true, Pushback.ABSENT, true, false, 1, 0, 0))
                .as("a hedge at once is checked when it is sent").isEqualTo(new Hedge(0));
    }

    @Test
    void aHedgeAboutToBeSentNeedsTimeLeftAndTheThrottle() {
        assertThat(Decision.beforeHedge(NO_DEADLINE, true)).isEqualTo(new Hedge(0));
        assertThat(Decision.beforeHedge(1, true)).isEqualTo(new Hedge(0));
        assertThat(Decision.beforeHedge(0, true)).isEqualTo(new Stop(SuppressionReason.DEADLINE));
        assertThat(Decision.beforeHedge(-1, false)).isEqualTo(new Stop(SuppressionReason.DEADLINE));
        assertThat(Decision.beforeHedge(NO_DEADLINE, false)).isEqualTo(new Stop(SuppressionReason.THROTTLED));
    }
}
