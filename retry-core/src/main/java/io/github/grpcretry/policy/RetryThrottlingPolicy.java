package io.github.grpcretry.policy;

/**
 * gRFC A6 {@code retryThrottling}: max tokens in (0, 1000], token ratio &gt; 0; three decimals are kept,
 * so both are at least 0.001. The record checks this itself and throws {@link IllegalArgumentException}
 * otherwise (docs/design.md §5, §13).
 */
public record RetryThrottlingPolicy(double maxTokens, double tokenRatio) {

    /** The largest {@code maxTokens} A6 allows. */
    public static final double MAX_TOKENS_LIMIT = 1000;

    public RetryThrottlingPolicy {
        if (!(maxTokens > 0) || maxTokens > MAX_TOKENS_LIMIT || Math.round(maxTokens * 1000) < 1) {
            throw new IllegalArgumentException("maxTokens must be in (0, 1000] (three decimals kept), was " + maxTokens);
        }
        if (!(tokenRatio > 0) || Double.isInfinite(tokenRatio) || Math.round(tokenRatio * 1000) < 1) {
            throw new IllegalArgumentException("tokenRatio must be > 0 (at least 0.001), was " + tokenRatio);
        }
    }

    /** Max tokens in thousandths, as the throttle keeps them. */
    public int maxTokensMilli() {
        return (int) Math.round(maxTokens * 1000);
    }

    /**
     * Token ratio in thousandths (A6: three decimal places are kept), at most 1000 tokens: a success
     * can never give back more than a full bucket, and a huge ratio must not wrap around the int.
     */
    public int tokenRatioMilli() {
        return (int) Math.min(Math.round(tokenRatio * 1000), 1_000_000L);
    }
}
