package io.github.grpcretry.deadline;

import io.grpc.Context;
import io.grpc.Deadline;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The time left to the current gRPC {@code Context}'s deadline, for code that degrades softly as
 * time runs out (for instance: at least 500 ms left, do the full work; 200 to 500 ms, do optional
 * work asynchronously; under 200 ms, skip it).
 */
public final class Deadlines {

    private Deadlines() {
    }

    /**
     * The time left to the deadline of {@link Context#current()}: empty when there is no deadline,
     * {@link Duration#ZERO} when it has passed.
     */
    public static Optional<Duration> remaining() {
        return remaining(Context.current());
    }

    /** The time left to {@code context}'s deadline (see {@link #remaining()}). */
    public static Optional<Duration> remaining(Context context) {
        Deadline deadline = Objects.requireNonNull(context, "context").getDeadline();
        if (deadline == null) {
            return Optional.empty();
        }
        long nanos = deadline.timeRemaining(TimeUnit.NANOSECONDS);
        return Optional.of(nanos <= 0 ? Duration.ZERO : Duration.ofNanos(nanos));
    }

    /**
     * Whether the current context has at least {@code time} left: true when it has no deadline, false
     * when it has been cancelled.
     */
    public static boolean hasAtLeast(Duration time) {
        Objects.requireNonNull(time, "time");
        Context context = Context.current();
        if (context.isCancelled()) {
            return false;
        }
        Deadline deadline = context.getDeadline();
        return deadline == null || deadline.timeRemaining(TimeUnit.NANOSECONDS) >= time.toNanos();
    }
}
