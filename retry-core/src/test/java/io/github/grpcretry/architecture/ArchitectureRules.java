package io.github.grpcretry.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.codeUnits;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaCall;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaFieldAccess;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The architecture rules of grpc-retry, shared by retry-core's tests and the auto-configuration
 * modules' tests (through retry-core's test-jar). Each rule is shown to fail on a deliberately bad
 * fixture in {@code ArchitectureRulesTest}.
 */
public final class ArchitectureRules {

    /** retry-core imports nothing from Spring (nor from net.devh, a Spring library). */
    public static final ArchRule CORE_IS_SPRING_FREE = noClasses()
            .that().resideInAPackage("io.github.grpcretry..")
            .should().dependOnClassesThat().resideInAnyPackage("org.springframework..", "net.devh..")
            .because("retry-core is plain Java on grpc-java; Spring lives in the auto-configuration modules (docs/design.md)");

    /**
     * retry-core knows neither servlets nor Spring Boot lines: no servlet API, no type of the Spring glue
     * ({@code io.github.grpcretry.spring} and its sub-packages, in retry-spring) and no type named after Spring Boot.
     */
    public static final ArchRule CORE_KNOWS_NO_SERVLET_NOR_BOOT_LINE = noClasses()
            .that().resideInAPackage("io.github.grpcretry..")
            .should().dependOnClassesThat().resideInAnyPackage("jakarta.servlet..", "javax.servlet..",
                    "io.github.grpcretry.spring..")
            .orShould().haveSimpleNameContaining("SpringBoot")
            .because("retry-core is the engine, policy model, limiters, deadlines and meters; servlets and Spring Boot lines are retry-spring's (docs/design.md)");

    /** No cycle between the packages of grpc-retry. */
    public static final ArchRule NO_PACKAGE_CYCLES = slices()
            .matching("io.github.grpcretry.(**)")
            .should().beFreeOfCycles()
            .because("each package builds on the ones below it (docs/design.md)");

    /**
     * A Boot line's auto-configuration module uses retry-core's API packages and retry-spring's
     * integration packages ({@code io.github.grpcretry.spring} and its sub-packages) only, never an {@code internal} one (their package-info says they may
     * change without notice).
     */
    public static final ArchRule AUTOCONFIGURE_USES_NO_INTERNALS = noClasses()
            .that().resideOutsideOfPackage("io.github.grpcretry.internal..")
            .should().dependOnClassesThat().resideInAPackage("io.github.grpcretry.internal..")
            .because("the auto-configuration modules may use only retry-core's API packages and retry-spring's integration packages (docs/api.md)");

    /**
     * The main code of a published module imports no {@code internal} package of another module: only its own
     * (the packages of the classes checked). Checked by every published module's tests on its own main
     * classes; tests and benchmarks may reach into {@code internal}.
     */
    public static final ArchRule NO_OTHER_MODULES_INTERNALS = noClasses()
            .should(new ArchCondition<JavaClass>("import an internal package of another module") {
                private final java.util.Set<String> ownPackages = new java.util.HashSet<>();

                @Override
                public void init(java.util.Collection<JavaClass> allObjectsToTest) {
                    allObjectsToTest.forEach(c -> ownPackages.add(c.getPackageName()));
                }

                @Override
                public void check(JavaClass item, ConditionEvents events) {
                    item.getDirectDependenciesFromSelf().stream()
                            .filter(d -> d.getTargetClass().getPackageName().matches("io\\.github\\.grpcretry(\\..+)?\\.internal(\\..+)?"))
                            .filter(d -> !ownPackages.contains(d.getTargetClass().getPackageName()))
                            .forEach(d -> events.add(SimpleConditionEvent.satisfied(d, d.getDescription())));
                }
            })
            .because("an internal package is its module's own: it may change without notice, and japicmp does not see"
                    + " it (docs/api.md)");

    /**
     * Code in {@code packages} (an application, such as the samples) uses the starter through its API
     * packages only: never an {@code internal} package, retry-spring's sub-packages meant for the
     * Boot lines, or a Boot line's own classes.
     */
    public static ArchRule usesOnlyThePublicApi(String packages) {
        return noClasses()
                .that().resideInAPackage(packages)
                .should().dependOnClassesThat().resideInAnyPackage("io.github.grpcretry.internal..",
                        "io.github.grpcretry.spring.*..", "io.github.grpcretry.autoconfigure..",
                        "io.github.grpcretry.springgrpc..")
                .because("an application uses the starter through its properties, beans and API packages (docs/api.md)");
    }

    /**
     * retry-core's API packages (and retry-spring's integration packages) expose no internal type: no public method or constructor
     * of a public class outside the {@code internal} packages takes or returns one (the auto-configuration
     * modules and applications could not use it without reaching into {@code internal}).
     */
    public static final ArchRule API_EXPOSES_NO_INTERNALS = codeUnits()
            .that().arePublic()
            .and().areDeclaredInClassesThat().arePublic()
            .and().areDeclaredInClassesThat().resideOutsideOfPackage("io.github.grpcretry.internal..")
            .should(new ArchCondition<JavaCodeUnit>("take or return no type of an internal package") {
                @Override
                public void check(JavaCodeUnit unit, ConditionEvents events) {
                    List<JavaClass> types = new ArrayList<>(unit.getRawParameterTypes());
                    types.add(unit.getRawReturnType());
                    for (JavaClass type : types) {
                        if (type.getPackageName().startsWith("io.github.grpcretry.internal")) {
                            events.add(SimpleConditionEvent.violated(unit, unit.getFullName() + " exposes " + type.getName()));
                        }
                    }
                }
            })
            .because("what is public outside internal is API or integration SPI, and internal types may change without notice (docs/api.md)");

    /**
     * No two classes of grpc-retry whose initialisation needs each other's: a class's static initialiser and its
     * superclass (and superinterfaces with default methods) are what its initialisation needs; a cycle of them
     * deadlocks two threads that start initialising two of its classes at once (the start-up warm-up runs the
     * starter's code on a thread of its own while the main thread runs it). An anonymous class counts as the class it
     * is written in (an enum's constants with bodies, an interface's {@code NOOP}): only that class's code makes one,
     * so no thread initialises it before that class.
     */
    public static final ArchRule NO_STATIC_INITIALIZER_CYCLES = classes()
            .that().resideInAPackage("io.github.grpcretry..")
            .should(new ArchCondition<JavaClass>("have no cycle of static initialisers") {
                private final Map<String, Set<String>> needs = new TreeMap<>();

                @Override
                public void init(java.util.Collection<JavaClass> all) {
                    needs.clear(); // one graph per check
                }

                @Override
                public void check(JavaClass c, ConditionEvents events) {
                    String self = node(c);
                    Set<String> out = needs.computeIfAbsent(self, k -> new TreeSet<>());
                    List<JavaClass> targets = new ArrayList<>();
                    c.getRawSuperclass().ifPresent(targets::add);
                    c.getRawInterfaces().stream().filter(i -> i.getMethods().stream()
                            .anyMatch(m -> !m.getModifiers().contains(JavaModifier.ABSTRACT)
                                    && !m.getModifiers().contains(JavaModifier.STATIC))).forEach(targets::add);
                    c.getStaticInitializer().ifPresent(init -> initialisedWithin(init, targets));
                    for (JavaClass t : targets) {
                        if (t.getPackageName().startsWith("io.github.grpcretry") && !node(t).equals(self)) {
                            out.add(node(t));
                        }
                    }
                }

                @Override
                public void finish(ConditionEvents events) {
                    Set<String> done = new TreeSet<>();
                    for (String start : needs.keySet()) {
                        List<String> cycle = cycleFrom(start, new ArrayList<>(), done);
                        if (cycle != null) {
                            events.add(SimpleConditionEvent.violated(start, "static initialisers in a cycle: "
                                    + String.join(" -> ", cycle)));
                            return;
                        }
                    }
                }

                private List<String> cycleFrom(String c, List<String> path, Set<String> done) {
                    int at = path.indexOf(c);
                    if (at >= 0) {
                        List<String> cycle = new ArrayList<>(path.subList(at, path.size()));
                        cycle.add(c);
                        return cycle;
                    }
                    if (done.contains(c)) {
                        return null;
                    }
                    path.add(c);
                    for (String next : needs.getOrDefault(c, Set.of())) {
                        List<String> cycle = cycleFrom(next, path, done);
                        if (cycle != null) {
                            return cycle;
                        }
                    }
                    path.remove(path.size() - 1);
                    done.add(c);
                    return null;
                }

                /**
                 * The classes whose initialisation {@code init} (a static initialiser) may start while its class is
                 * being initialised: the owners of the static fields it reads or writes, of the static methods and
                 * constructors it calls, and so on through the code of grpc-retry's those calls run (a method of
                 * its own, a helper elsewhere, a constructor), each followed once; an instance method's owner is
                 * initialised already (it has an instance), its code is followed.
                 */
                private void initialisedWithin(JavaCodeUnit init, List<JavaClass> targets) {
                    Set<JavaCodeUnit> seen = new java.util.HashSet<>(List.of(init));
                    java.util.ArrayDeque<JavaCodeUnit> queue = new java.util.ArrayDeque<>(List.of(init));
                    while (!queue.isEmpty()) {
                        JavaCodeUnit unit = queue.poll();
                        for (JavaFieldAccess a : unit.getFieldAccesses()) {
                            if (a.getTarget().resolveMember().map(f -> f.getModifiers().contains(JavaModifier.STATIC))
                                    .orElse(true)) {
                                targets.add(a.getTargetOwner());
                            }
                        }
                        List<JavaCall<?>> calls = new ArrayList<>(unit.getMethodCallsFromSelf());
                        calls.addAll(unit.getConstructorCallsFromSelf());
                        for (JavaCall<?> call : calls) {
                            Optional<? extends JavaCodeUnit> target = call.getTarget().resolveMember();
                            boolean instance = call instanceof JavaMethodCall && target.isPresent()
                                    && !target.get().getModifiers().contains(JavaModifier.STATIC);
                            if (!instance) {
                                targets.add(call.getTargetOwner());
                            }
                            if (target.isPresent() && target.get().getOwner().getPackageName()
                                    .startsWith("io.github.grpcretry") && seen.add(target.get())) {
                                queue.add(target.get());
                            }
                        }
                    }
                }

                private String node(JavaClass c) {
                    return c.isAnonymousClass() && c.getEnclosingClass().isPresent() ? node(c.getEnclosingClass().get())
                            : c.getName();
                }
            })
            .because("the start-up warm-up initialises the starter's classes on its own thread beside the main thread "
                    + "(docs/design.md §13)");

    /**
     * The main classes of every grpc-retry module on the class path (a line's tests see retry-core, retry-spring and
     * the line's own), without tests and the rules' fixtures.
     */
    public static JavaClasses everyModulesMainClasses() {
        return new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.github.grpcretry").that(JavaClass.Predicates.resideOutsideOfPackage("..archfixture.."));
    }

    private ArchitectureRules() {
    }
}
