package io.github.grpcretry.sample.demo;

/**
 * The demo's runtime controls: offered load, the backend's failure rate and latency tail, and the
 * strategy (channel) the generator uses.
 *
 * @param rate calls per second the generator offers (0–500)
 * @param failureRate probability that an attempt fails with UNAVAILABLE (0–1)
 * @param slowShare probability that an attempt is slow (0–1)
 * @param slowMs extra latency of a slow attempt in ms (0–5000)
 * @param strategy which channel the calls go through
 */
public record DemoSettings(double rate, double failureRate, double slowShare, int slowMs, DemoStrategy strategy) {

    public static final double MAX_RATE = 500;

    public DemoSettings {
        if (!(rate >= 0 && rate <= MAX_RATE)) {
            throw new IllegalArgumentException("rate must be in [0, " + (int) MAX_RATE + "] calls/s, was " + rate);
        }
        if (!(failureRate >= 0 && failureRate <= 1)) {
            throw new IllegalArgumentException("failureRate must be in [0, 1], was " + failureRate);
        }
        if (!(slowShare >= 0 && slowShare <= 1)) {
            throw new IllegalArgumentException("slowShare must be in [0, 1], was " + slowShare);
        }
        if (slowMs < 0 || slowMs > 5000) {
            throw new IllegalArgumentException("slowMs must be in [0, 5000], was " + slowMs);
        }
        if (strategy == null) {
            throw new IllegalArgumentException("strategy is required");
        }
    }

    /** A partial update from the REST API or the dashboard form: null fields keep their value. */
    public record Update(Double rate, Double failureRate, Double slowShare, Integer slowMs, DemoStrategy strategy) {
    }

    public DemoSettings with(Update u) {
        return new DemoSettings(u.rate() != null ? u.rate() : rate, u.failureRate() != null ? u.failureRate() : failureRate,
                u.slowShare() != null ? u.slowShare() : slowShare, u.slowMs() != null ? u.slowMs() : slowMs,
                u.strategy() != null ? u.strategy() : strategy);
    }
}
