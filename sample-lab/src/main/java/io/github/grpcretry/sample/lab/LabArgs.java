package io.github.grpcretry.sample.lab;

import java.nio.file.Files;
import java.nio.file.Path;

/** The lab's command-line options, {@code --lab.<name>=<value>}, as both samples read them. */
public final class LabArgs {

    private LabArgs() {
    }

    /** The value of {@code --lab.<name>=}, the last one given, or {@code fallback}. */
    public static String value(String[] args, String name, String fallback) {
        String prefix = "--lab." + name + "=";
        String value = fallback;
        for (String a : args) {
            if (a.startsWith(prefix)) {
                value = a.substring(prefix.length());
            }
        }
        return value;
    }

    /** {@code --lab.out}, else {@code <module>/target/lab} from the repository root, {@code target/lab} otherwise. */
    public static Path out(String[] args, String module) {
        String out = value(args, "out", null);
        if (out != null) {
            return Path.of(out);
        }
        return Files.isDirectory(Path.of(module)) ? Path.of(module, "target", "lab") : Path.of("target", "lab");
    }

    /** {@code --lab.seed}, else {@code fallback}. */
    public static long seed(String[] args, long fallback) {
        return Long.parseLong(value(args, "seed", Long.toString(fallback)));
    }
}
