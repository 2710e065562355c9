package io.github.grpcretry.internal.config;

import io.github.grpcretry.policy.ConfigProblem;
import io.grpc.Status;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Reads gRPC status codes as users write them: names in any case ({@code unavailable},
 * {@code UNAVAILABLE}, {@code Deadline_Exceeded}, {@code deadline-exceeded}) or numbers ({@code 14}).
 */
public final class StatusCodes {

    private StatusCodes() {
    }

    /**
     * The code named by {@code text}.
     *
     * @throws IllegalArgumentException when {@code text} names no status code
     */
    public static Status.Code parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException(notACode(text));
        }
        String t = text.trim();
        if (t.chars().allMatch(Character::isDigit)) {
            int value;
            try {
                value = Integer.parseInt(t);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(notACode(text));
            }
            for (Status.Code c : Status.Code.values()) {
                if (c.value() == value) {
                    return c;
                }
            }
            throw new IllegalArgumentException(notACode(text));
        }
        String name = t.replace('-', '_').toUpperCase(Locale.ROOT);
        try {
            return Status.Code.valueOf(name);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(notACode(text));
        }
    }

    private static String notACode(String text) {
        return "'" + text + "' is not a gRPC status code: use a name in any case (UNAVAILABLE, unavailable) or a"
                + " number from 0 to " + (Status.Code.values().length - 1) + " (14)";
    }

    /**
     * Parses every entry of {@code texts}; each entry that names no code adds a problem at
     * {@code path[i]}. Returns the codes that parsed.
     */
    public static Set<Status.Code> parseAll(List<String> texts, String path, List<ConfigProblem> problems) {
        Set<Status.Code> out = EnumSet.noneOf(Status.Code.class);
        for (int i = 0; i < texts.size(); i++) {
            String text = texts.get(i);
            try {
                out.add(parse(text));
            } catch (IllegalArgumentException e) {
                problems.add(new ConfigProblem(path + "[" + i + "]", text,
                        "must be a gRPC status code name (any case) or number",
                        "use one of " + allNames()));
            }
        }
        return out;
    }

    /** Every code name, comma separated, for messages. */
    public static String allNames() {
        StringBuilder sb = new StringBuilder();
        for (Status.Code c : Status.Code.values()) {
            if (sb.length() > 0) {
                sb.append(", ");
            }
            sb.append(c.name());
        }
        return sb.toString();
    }
}
