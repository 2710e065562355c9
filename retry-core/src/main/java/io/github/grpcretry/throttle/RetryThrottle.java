package io.github.grpcretry.throttle;

import io.github.grpcretry.policy.RetryThrottlingPolicy;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The gRFC A6 retry-throttling token bucket of one channel. Tokens are kept in thousandths in one
 * {@link AtomicInteger} and changed with compare-and-set loops: no lock on the call path.
 *
 * <ul>
 *   <li>starts full at {@code maxTokens};</li>
 *   <li>a qualified failure (retryable status, or a pushback that says stop) takes one token, never below 0;</li>
 *   <li>a call that ends OK gives {@code tokenRatio} back, never above {@code maxTokens};</li>
 *   <li>a retry or hedge is allowed only while tokens are above {@code maxTokens / 2}.</li>
 * </ul>
 */
public final class RetryThrottle {

    private static final int ONE_TOKEN = 1000;

    private final int maxTokens;
    private final int threshold;
    private final int tokenRatio;
    private final AtomicInteger tokens;

    public RetryThrottle(RetryThrottlingPolicy policy) {
        this(policy.maxTokensMilli(), policy.tokenRatioMilli());
    }

    private RetryThrottle(int maxTokensMilli, int tokenRatioMilli) {
        if (maxTokensMilli <= 0 || tokenRatioMilli <= 0) {
            throw new IllegalArgumentException("maxTokens and tokenRatio must be > 0");
        }
        this.maxTokens = maxTokensMilli;
        this.threshold = maxTokensMilli / 2;
        this.tokenRatio = tokenRatioMilli;
        this.tokens = new AtomicInteger(maxTokensMilli);
    }

    /**
     * Takes one token for a qualified failure and tells whether a retry may still follow (tokens
     * above the threshold after this deduction).
     */
    public boolean onQualifiedFailureThenCheckAllowed() {
        while (true) {
            int current = tokens.get();
            int next = Math.max(current - ONE_TOKEN, 0);
            if (current == next || tokens.compareAndSet(current, next)) {
                return next > threshold;
            }
        }
    }

    /** Gives back {@code tokenRatio} for a call that ended OK. */
    public void onSuccess() {
        while (true) {
            int current = tokens.get();
            int next = Math.min(current + tokenRatio, maxTokens);
            if (current == next || tokens.compareAndSet(current, next)) {
                return;
            }
        }
    }

    /** Whether a retry or hedge is allowed now (tokens above the threshold). */
    public boolean isRetryAllowed() {
        return tokens.get() > threshold;
    }

    /** Current tokens. */
    public double tokens() {
        return tokens.get() / 1000.0;
    }

    public double maxTokens() {
        return maxTokens / 1000.0;
    }

    /** The level at or below which retries are throttled: {@code maxTokens / 2}. */
    public double threshold() {
        return threshold / 1000.0;
    }

    public double tokenRatio() {
        return tokenRatio / 1000.0;
    }

    /** Whether retries are being refused now. */
    public boolean isThrottling() {
        return !isRetryAllowed();
    }

    @Override
    public String toString() {
        return "RetryThrottle[tokens=" + tokens() + ", max=" + maxTokens() + ", ratio=" + tokenRatio() + "]";
    }
}
