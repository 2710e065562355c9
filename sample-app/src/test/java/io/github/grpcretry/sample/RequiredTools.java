package io.github.grpcretry.sample;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;

/**
 * External programs that some tests run (Chromium and chromedriver, promtool), all from Debian packages
 * that {@code .ci/run} installs. A test whose program is missing is skipped on a developer's machine and
 * fails under {@code CI=true}, so CI cannot pass without having run it.
 */
final class RequiredTools {

    private RequiredTools() {
    }

    /**
     * The executable named by system property {@code property} when it is set (null when that file
     * is not executable), else the first of {@code names} found in a directory of the PATH.
     */
    static Path executable(String property, List<String> names) {
        String given = System.getProperty(property);
        if (given != null && !given.isBlank()) {
            Path p = Path.of(given);
            return Files.isExecutable(p) ? p : null;
        }
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String name : names) {
            for (String dir : path.split(File.pathSeparator)) {
                if (dir.isEmpty()) {
                    continue;
                }
                Path candidate = Path.of(dir, name);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return candidate;
                }
            }
        }
        return null;
    }

    /** A required program is missing: fails the test under {@code CI=true}, skips it otherwise. */
    static void missing(String why) {
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new AssertionError("CI=true and " + why);
        }
        Assumptions.abort(why);
    }
}
