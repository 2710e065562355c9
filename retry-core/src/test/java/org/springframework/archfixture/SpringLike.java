package org.springframework.archfixture;

/**
 * Test fixture only: a class in an {@code org.springframework} package (retry-core has no Spring on its
 * class path), so {@code ArchitectureRulesTest} can show the no-Spring rule failing.
 */
public final class SpringLike {

    public static String name() {
        return "spring";
    }
}
