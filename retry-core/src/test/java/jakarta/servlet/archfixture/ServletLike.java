package jakarta.servlet.archfixture;

/**
 * Test fixture only: a class in a {@code jakarta.servlet} package (retry-core has no servlet API on its
 * class path), so {@code ArchitectureRulesTest} can show the no-servlet rule failing.
 */
public final class ServletLike {

    public static String name() {
        return "servlet";
    }
}
