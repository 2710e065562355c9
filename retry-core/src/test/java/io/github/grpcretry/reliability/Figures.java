package io.github.grpcretry.reliability;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The figures a reliability test measured, printed and appended to
 * {@code target/reliability/figures.txt} (one line each), for docs/reliability.md.
 */
final class Figures {

    private static final Path FILE = Path.of("target", "reliability", "figures.txt");

    private Figures() {
    }

    static synchronized void record(String test, String line) {
        String text = test + ": " + line;
        System.out.println("[reliability] " + text);
        try {
            Files.createDirectories(FILE.getParent());
            Files.writeString(FILE, text + System.lineSeparator(), StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            // figures are a report, not a result
        }
    }
}
