package io.github.grpcretry.policy;

/**
 * gRFC A6 {@code retryThrottling}: max tokens in (0, 1000], token ratio > 0 (three decimals kept).
 */
public record RetryThrottlingPolicy(double maxTokens, double tokenRatio) {

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
