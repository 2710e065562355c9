package io.github.grpcretry.internal.config;

import io.github.grpcretry.internal.time.Durations;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A configured value together with where it was set, so a problem with it can name the place.
 *
 * @param value the value, not null
 * @param path full property path or {@code <file> $.<json path>}
 * @param display the value as the user wrote it (or a readable rendering of it)
 */
public record Sourced<T>(T value, String path, String display) {

    public Sourced {
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(display, "display");
    }

    /** A value from {@code path}, shown in its natural form (durations as {@code 0.05s}). */
    public static <T> @Nullable Sourced<T> of(@Nullable T value, String path) {
        return value == null ? null : new Sourced<>(value, path, display(value));
    }

    /** The value of {@code s}, or null. */
    public static <T> @Nullable T valueOf(@Nullable Sourced<T> s) {
        return s == null ? null : s.value();
    }

    /** {@code over} when it is set, else {@code under}: the field-by-field overlay rule. */
    public static <T> @Nullable Sourced<T> firstSet(@Nullable Sourced<T> over, @Nullable Sourced<T> under) {
        return over != null ? over : under;
    }

    static String display(Object value) {
        if (value instanceof Duration d) {
            return Durations.toJson(d);
        }
        String text = String.valueOf(value);
        if (value instanceof Double n && Double.isFinite(n) && text.contains("E")) {
            // 0.0004 as written, not Java's 4.0E-4
            return java.math.BigDecimal.valueOf(n).stripTrailingZeros().toPlainString();
        }
        return text;
    }
}
