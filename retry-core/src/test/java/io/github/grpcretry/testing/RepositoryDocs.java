package io.github.grpcretry.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Checks of the repository's documentation that the Boot lines' tests run: relative links in the README
 * and in {@code docs/} resolve (files, and headings for {@code #anchors}, with GitHub's heading slugs), and
 * every configuration property of a module's generated metadata is documented in {@code docs/}.
 */
public final class RepositoryDocs {

    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    private static final Pattern FENCE = Pattern.compile("(?m)^```");

    private final Path root;

    private RepositoryDocs(Path root) {
        this.root = root;
    }

    /** The repository above the working directory (a module's folder when Maven runs its tests). */
    public static RepositoryDocs find() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !(Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("docs"))
                && Files.isRegularFile(dir.resolve("mvnw")))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("no repository root (README.md, docs/, mvnw) above " + Path.of("").toAbsolutePath());
        }
        return new RepositoryDocs(dir);
    }

    public Path readme() {
        return root.resolve("README.md");
    }

    /**
     * The code blocks of {@code language} ({@code yaml}, {@code xml}) in the README section whose heading
     * line is {@code heading} (up to the next heading), in order, as written.
     */
    public List<String> readmeCodeBlocks(String heading, String language) {
        List<String> lines;
        try {
            lines = Files.readAllLines(readme());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int start = lines.indexOf(heading);
        if (start < 0) {
            throw new IllegalStateException("README.md has no heading " + heading);
        }
        List<String> blocks = new ArrayList<>();
        StringBuilder block = null;
        for (int i = start + 1; i < lines.size() && !lines.get(i).startsWith("#"); i++) {
            String line = lines.get(i);
            if (block == null && line.equals("```" + language)) {
                block = new StringBuilder();
            } else if (block != null && line.equals("```")) {
                blocks.add(block.toString());
                block = null;
            } else if (block != null) {
                block.append(line).append('\n');
            }
        }
        return blocks;
    }

    /** The README's section on reaching the endpoint over HTTP, which both quick starts rely on. */
    public static final String ENDPOINT_SECTION = "### See the endpoint over HTTP (both lines)";

    /**
     * The README's quick start under {@code heading} as an application's configuration, as written: its one
     * YAML block and the endpoint section's YAML block, each written to a file in {@code dir}. Fails unless
     * the endpoint section names the web and Actuator starters.
     *
     * @return the value of {@code spring.config.location} naming both files
     */
    public String writeQuickStart(String heading, Path dir) {
        List<String> quickStart = readmeCodeBlocks(heading, "yaml");
        List<String> endpointYaml = readmeCodeBlocks(ENDPOINT_SECTION, "yaml");
        List<String> endpointXml = readmeCodeBlocks(ENDPOINT_SECTION, "xml");
        if (quickStart.size() != 1 || endpointYaml.size() != 1 || endpointXml.size() != 1
                || !endpointXml.get(0).contains("<artifactId>spring-boot-starter-web</artifactId>")
                || !endpointXml.get(0).contains("<artifactId>spring-boot-starter-actuator</artifactId>")) {
            throw new IllegalStateException("README.md: " + heading + " needs one YAML block, and " + ENDPOINT_SECTION
                    + " one YAML block and one XML block naming spring-boot-starter-web and spring-boot-starter-actuator");
        }
        try {
            Path application = Files.writeString(dir.resolve("application.yml"), quickStart.get(0));
            Path endpoint = Files.writeString(dir.resolve("application-endpoint.yml"), endpointYaml.get(0));
            return "file:" + application + ",file:" + endpoint;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The README and every Markdown file in {@code docs/}. */
    public List<Path> markdownFiles() {
        List<Path> files = new ArrayList<>();
        files.add(readme());
        try (Stream<Path> s = Files.list(root.resolve("docs"))) {
            s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return files;
    }

    /** Every relative link of {@code file} whose target file or heading does not exist, as "file: link (why)". */
    public List<String> brokenLinks(Path file) {
        List<String> broken = new ArrayList<>();
        String text = withoutCodeBlocks(read(file));
        Matcher m = LINK.matcher(text);
        while (m.find()) {
            String link = m.group(1);
            if (link.matches("^[a-z]+:.*")) {
                continue; // http:, https:, mailto:
            }
            int hash = link.indexOf('#');
            String target = hash < 0 ? link : link.substring(0, hash);
            String anchor = hash < 0 ? null : link.substring(hash + 1);
            Path resolved = target.isEmpty() ? file : file.getParent().resolve(target).normalize();
            if (!Files.exists(resolved)) {
                broken.add(root.relativize(file) + ": " + link + " (no such file)");
            } else if (anchor != null && resolved.toString().endsWith(".md") && !slugs(resolved).contains(anchor)) {
                broken.add(root.relativize(file) + ": " + link + " (no such heading in " + root.relativize(resolved) + ")");
            }
        }
        return broken;
    }

    /**
     * The property names that no file of {@code docs/} mentions. A channel's property
     * ({@code grpc.retry.clients.<channel>.x}) counts as documented when its part after the channel name
     * is written with any channel and any list index ({@code method[i]}, {@code name[j]}).
     */
    public List<String> undocumented(Collection<String> propertyNames) {
        StringBuilder all = new StringBuilder();
        for (Path p : markdownFiles()) {
            if (!p.equals(readme())) {
                all.append(read(p)).append('\n');
            }
        }
        String docs = all.toString();
        List<String> missing = new ArrayList<>();
        for (String name : propertyNames) {
            String wanted = name;
            int clients = name.indexOf(".clients.");
            if (clients >= 0 && name.indexOf('.', clients + ".clients.".length()) > 0) {
                wanted = name.substring(name.indexOf('.', clients + ".clients.".length()) + 1);
            }
            String regex = Pattern.quote(wanted).replace("[0]", "\\E\\[[^\\]]*\\]\\Q");
            if (!Pattern.compile(regex).matcher(docs).find()) {
                missing.add(name);
            }
        }
        return missing;
    }

    private static Set<String> slugs(Path markdown) {
        Set<String> slugs = new HashSet<>();
        for (String line : withoutCodeBlocks(read(markdown)).split("\n")) {
            if (line.startsWith("#")) {
                String heading = line.replaceFirst("^#+\\s*", "").trim();
                String slug = heading.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
                String unique = slug;
                for (int i = 1; slugs.contains(unique); i++) {
                    unique = slug + "-" + i;
                }
                slugs.add(unique);
            }
        }
        return slugs;
    }

    private static String withoutCodeBlocks(String text) {
        String[] parts = FENCE.split(text, -1);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < parts.length; i += 2) {
            out.append(parts[i]);
        }
        return out.toString();
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
