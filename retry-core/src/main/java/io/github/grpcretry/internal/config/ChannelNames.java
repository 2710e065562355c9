package io.github.grpcretry.internal.config;

import io.github.grpcretry.policy.ChannelRetryConfigs;

/**
 * How an entry under {@code grpc.retry.clients} is matched to a channel: as Spring Boot's relaxed binding
 * matches keys. Spring Boot compares the elements of a key in their uniform form (lower case, letters and
 * digits only), and an environment variable such as {@code GRPC_RETRY_CLIENTS_MYSVC_MAXATTEMPTSCAP} arrives
 * as the lower-case key {@code mysvc}; so an entry applies to the channel of its exact name, else to the
 * channel whose name has the same uniform form ({@code MySvc}, {@code my-svc}, {@code my_svc} and
 * {@code mysvc} are one name). {@code GLOBAL} is reserved in every spelling that folds to {@code global}.
 */
public final class ChannelNames {

    private ChannelNames() {
    }

    /** Spring Boot's uniform form of a name (or of any element of a key): lower case, letters and digits only. */
    public static String uniform(String name) {
        StringBuilder b = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (Character.isLetterOrDigit(c)) {
                b.append(Character.toLowerCase(c));
            }
        }
        return b.toString();
    }

    /** Whether {@code key} names the GLOBAL entry ({@code GLOBAL}, {@code global}, {@code Global}, ...). */
    public static boolean isGlobal(String key) {
        return uniform(key).equals(uniform(ChannelRetryConfigs.GLOBAL));
    }

    /** Whether an entry {@code key} applies to {@code channel}: the same name, or the same uniform form. */
    public static boolean matches(String key, String channel) {
        return key.equals(channel) || uniform(key).equals(uniform(channel));
    }

    /**
     * Whether the uniform forms of {@code a} and {@code b} differ by exactly one edit: one letter or digit
     * inserted, removed or replaced, or two adjacent ones swapped ({@code svcc}, {@code sv}, {@code svd},
     * {@code vsc} for {@code svc}).
     */
    public static boolean oneEditApart(String a, String b) {
        String x = uniform(a);
        String y = uniform(b);
        if (x.equals(y) || Math.abs(x.length() - y.length()) > 1) {
            return false;
        }
        if (x.length() == y.length()) {
            int first = -1;
            int differences = 0;
            for (int i = 0; i < x.length(); i++) {
                if (x.charAt(i) != y.charAt(i)) {
                    if (++differences == 1) {
                        first = i;
                    }
                }
            }
            return differences == 1 || (differences == 2 && first + 1 < x.length()
                    && x.charAt(first) == y.charAt(first + 1) && x.charAt(first + 1) == y.charAt(first));
        }
        String longer = x.length() > y.length() ? x : y;
        String shorter = longer == x ? y : x;
        int i = 0;
        while (i < shorter.length() && shorter.charAt(i) == longer.charAt(i)) {
            i++;
        }
        return shorter.substring(i).equals(longer.substring(i + 1));
    }
}
