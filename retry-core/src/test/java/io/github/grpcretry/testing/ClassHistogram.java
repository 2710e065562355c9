package io.github.grpcretry.testing;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;

/**
 * Live instances per class after a full collection, from the JVM's own class histogram (HotSpot's
 * {@code GC.class_histogram} diagnostic command, what {@code jcmd <pid> GC.class_histogram} prints,
 * run in-process through the DiagnosticCommand MBean).
 */
public final class ClassHistogram {

    /**
     * The classes whose instances belong to one call: the interceptor engine's calls, attempts,
     * retry state, timers and request buffer; the native path's call wrapper, its listener, attempt
     * tracker, stream tracers and ended-attempt records; grpc-java's own call, retriable stream and
     * delayed call/stream. Lambdas of these classes count with them.
     */
    public static final List<String> PER_CALL_CLASSES = List.of(
            "io.github.grpcretry.attempt.RetryingCall",
            "io.github.grpcretry.attempt.HedgingCall",
            "io.github.grpcretry.attempt.EngineCall",
            "io.github.grpcretry.attempt.RetryScheduler$Timer",
            "io.github.grpcretry.attempt.RetryDecider$Call",
            "io.github.grpcretry.commit.CallBuffer",
            "io.github.grpcretry.attempt.NativeAttemptInterceptor$",
            "io.grpc.internal.ClientCallImpl",
            "io.grpc.internal.RetriableStream",
            "io.grpc.internal.DelayedClientCall",
            "io.grpc.internal.DelayedStream");

    private static final Pattern ROW = Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+\\d+\\s+(\\S+)");

    private ClassHistogram() {
    }

    /** Whether this JVM offers the histogram (HotSpot). */
    public static boolean available() {
        try {
            raw();
            return true;
        } catch (Exception | LinkageError e) {
            return false;
        }
    }

    /**
     * Live instances (after the full collection the command runs) of every class whose name starts
     * with one of {@code prefixes}, by class name; classes without instances are absent.
     */
    public static Map<String, Long> liveInstances(List<String> prefixes) throws Exception {
        Map<String, Long> out = new TreeMap<>();
        for (String line : raw().split("\n")) {
            Matcher m = ROW.matcher(line);
            if (!m.find()) {
                continue;
            }
            String name = m.group(2);
            for (String p : prefixes) {
                if (name.startsWith(p)) {
                    out.merge(name, Long.parseLong(m.group(1)), Long::sum);
                    break;
                }
            }
        }
        return out;
    }

    /** The sum of {@code counts}' values. */
    public static long total(Map<String, Long> counts) {
        long n = 0;
        for (long v : counts.values()) {
            n += v;
        }
        return n;
    }

    private static String raw() throws Exception {
        return (String) ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                new Object[] {new String[0]}, new String[] {String[].class.getName()});
    }
}
