package io.github.grpcretry.sample.lab;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** The lab's result: every table, the engine it ran on, and the Markdown / CSV renderings. */
public record LabReport(String engine, String engineNote, List<LabTable> tables, long elapsedMillis) {

    public Stream<LabRow> rows() {
        return tables.stream().flatMap(t -> t.rows().stream());
    }

    /** Exact rows that deviate from the article's figure (these make the lab exit non-zero). */
    public List<LabRow> failedExact() {
        return rows().filter(r -> r.check() == LabRow.Check.EXACT && !r.pass()).toList();
    }

    /** Rule rows that break their rule (these make the lab exit non-zero too). */
    public List<LabRow> failedRule() {
        return rows().filter(r -> r.check() == LabRow.Check.RULE && !r.pass()).toList();
    }

    /** How many rows are checked each way, in the order of {@link LabRow.Check}. */
    public java.util.Map<LabRow.Check, Long> countsByCheck() {
        java.util.Map<LabRow.Check, Long> counts = new java.util.EnumMap<>(LabRow.Check.class);
        rows().forEach(r -> counts.merge(r.check(), 1L, Long::sum));
        return counts;
    }

    /** Every checked row (exact, tolerance, range) that failed. */
    public List<LabRow> failed() {
        return rows().filter(r -> !r.pass()).toList();
    }

    /**
     * Prints every table and the verdict to the console and writes {@code lab.md} and {@code lab.csv} to
     * {@code out}; returns the exit status ({@link #exitCode()}).
     */
    public int print(Path out) {
        System.out.println(console());
        write(out);
        System.out.printf("%nLab finished in %.1f s on the %s engine%s. Tables: %s (lab.md, lab.csv)%n",
                elapsedMillis / 1000.0, engine, engineNote.isEmpty() ? "" : " (" + engineNote + ")", out.toAbsolutePath());
        System.out.println(summary());
        failed().stream().filter(r -> r.check() != LabRow.Check.EXACT && r.check() != LabRow.Check.RULE)
                .forEach(r -> System.out.println("  outside its " + r.check().label() + ": " + r.caseName() + " → " + r.measured()));
        failedExact().forEach(r -> System.out.println("  DEVIATES: " + r.caseName() + " → " + r.measured() + " (expected " + r.rule() + ")"));
        failedRule().forEach(r -> System.out.println("  BREAKS ITS RULE: " + r.caseName() + " → " + r.measured() + " (rule: " + r.rule() + ")"));
        int deviating = failedExact().size() + failedRule().size();
        if (deviating > 0) {
            System.out.println(deviating + " deterministic row(s) deviate: exit status 1");
        }
        return exitCode();
    }

    /** 1 when a deterministic row (exact or rule) failed, else 0. */
    public int exitCode() {
        return failedExact().isEmpty() && failedRule().isEmpty() ? 0 : 1;
    }

    /** How many rows are checked each way, e.g. "71 rows: 28 exact, 5 rule, 28 tolerance, 9 range, 1 info". */
    public String summary() {
        StringBuilder b = new StringBuilder();
        countsByCheck().forEach((check, n) -> b.append(b.length() == 0 ? "" : ", ").append(n).append(' ').append(check.label()));
        return rows().count() + " rows: " + b;
    }

    public String markdown() {
        StringBuilder b = new StringBuilder();
        b.append("Engine: `").append(engine).append("`").append(engineNote.isEmpty() ? "" : " (" + engineNote + ")")
                .append(". Checks: exact = deterministic, equal to the article's figure; rule = deterministic, judged ")
                .append("by the rule of this starter stated in the row (the article's figure differs on purpose or does ")
                .append("not exist); tolerance = random with a fixed seed, ±2 percentage points / ±0.03; range = timing; ")
                .append("n/a = not in this build. ").append(summary()).append(".\n\n");
        for (LabTable t : tables) {
            b.append("### ").append(t.id()).append(". ").append(t.title()).append("\n\n");
            b.append("| case | ").append(t.seedColumn()).append(" | measured now (").append(engine)
                    .append(" engine) | check | rule |\n");
            b.append("|---|---|---|---|---|\n");
            for (LabRow r : t.rows()) {
                b.append("| ").append(md(r.caseName())).append(" | ").append(md(r.seed())).append(" | ")
                        .append(md(r.measured())).append(" | ").append(r.mark()).append(' ').append(r.check().label())
                        .append(" | ").append(md(r.rule())).append(" |\n");
            }
            b.append('\n');
        }
        return b.toString();
    }

    public String csv() {
        StringBuilder b = new StringBuilder("table,case,seed,measured,check,pass,rule\n");
        for (LabTable t : tables) {
            for (LabRow r : t.rows()) {
                b.append(csv(t.id())).append(',').append(csv(r.caseName())).append(',').append(csv(r.seed())).append(',')
                        .append(csv(r.measured())).append(',').append(r.check().label()).append(',').append(r.pass())
                        .append(',').append(csv(r.rule())).append('\n');
            }
        }
        return b.toString();
    }

    /** A plain-text rendering for the console: each table with the seed and the measured column side by side. */
    public String console() {
        StringBuilder b = new StringBuilder();
        for (LabTable t : tables) {
            b.append('\n').append(t.id()).append(". ").append(t.title()).append('\n');
            int w0 = "case".length();
            int w1 = t.seedColumn().length();
            int w2 = "measured now".length();
            for (LabRow r : t.rows()) {
                w0 = Math.max(w0, r.caseName().length());
                w1 = Math.max(w1, r.seed().length());
                w2 = Math.max(w2, r.measured().length());
            }
            w0 = Math.min(w0, 60);
            w1 = Math.min(w1, 60);
            w2 = Math.min(w2, 70);
            String fmt = "  %-" + w0 + "s | %-" + w1 + "s | %-" + w2 + "s | %s%n";
            b.append(String.format(fmt, "case", t.seedColumn(), "measured now", "check"));
            b.append("  ").append("-".repeat(w0 + w1 + w2 + 20)).append('\n');
            for (LabRow r : t.rows()) {
                b.append(String.format(fmt, r.caseName(), r.seed(), r.measured(), r.mark() + " " + r.check().label()));
            }
        }
        return b.toString();
    }

    public void write(Path dir) {
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("lab.md"), markdown(), StandardCharsets.UTF_8);
            Files.writeString(dir.resolve("lab.csv"), csv(), StandardCharsets.UTF_8);
            for (LabTable t : tables) {
                for (java.util.Map.Entry<String, String> f : t.files().entrySet()) {
                    Files.writeString(dir.resolve(f.getKey()), f.getValue(), StandardCharsets.UTF_8);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String md(String s) {
        return s.replace("|", "\\|").replace("\n", " ");
    }

    private static String csv(String s) {
        return '"' + s.replace("\"", "\"\"") + '"';
    }
}
