package io.github.grpcretry.architecture;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import io.github.grpcretry.archfixture.app.UsesApi;
import io.github.grpcretry.archfixture.app.UsesInternal;
import io.github.grpcretry.archfixture.bootline.SpringBootLineAware;
import io.github.grpcretry.archfixture.bootline.UsesServlet;
import io.github.grpcretry.archfixture.clinit.ClinitHelper;
import io.github.grpcretry.archfixture.clinit.Field;
import io.github.grpcretry.archfixture.clinit.First;
import io.github.grpcretry.archfixture.clinit.Second;
import io.github.grpcretry.archfixture.clinit.ViaHelperFirst;
import io.github.grpcretry.archfixture.clinit.ViaHelperSecond;
import io.github.grpcretry.archfixture.clinit.ViaOwnMethodFirst;
import io.github.grpcretry.archfixture.clinit.ViaOwnMethodSecond;
import io.github.grpcretry.archfixture.cycle.a.A;
import io.github.grpcretry.archfixture.cycle.b.B;
import io.github.grpcretry.archfixture.exposing.ExposesInternal;
import io.github.grpcretry.archfixture.spring.UsesSpring;
import io.github.grpcretry.internal.commit.RetryBufferPool;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.throttle.RetryThrottle;
import jakarta.servlet.archfixture.ServletLike;
import org.junit.jupiter.api.Test;
import org.springframework.archfixture.SpringLike;

/** The rules themselves: each fails on a deliberately bad fixture and passes on a good class. */
class ArchitectureRulesTest {

    @Test
    void springFreeRuleFailsOnAClassThatUsesSpring() {
        JavaClasses bad = new ClassFileImporter().importClasses(UsesSpring.class, SpringLike.class);
        assertThatThrownBy(() -> ArchitectureRules.CORE_IS_SPRING_FREE.check(bad))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("UsesSpring")
                .hasMessageContaining("org.springframework.archfixture.SpringLike");
        assertThatCode(() -> ArchitectureRules.CORE_IS_SPRING_FREE.check(
                new ClassFileImporter().importClasses(ServiceConfig.class))).doesNotThrowAnyException();
    }

    @Test
    void coreRuleFailsOnServletUseAndOnABootLineName() {
        JavaClasses bad = new ClassFileImporter().importClasses(UsesServlet.class, ServletLike.class, SpringBootLineAware.class);
        assertThatThrownBy(() -> ArchitectureRules.CORE_KNOWS_NO_SERVLET_NOR_BOOT_LINE.check(bad))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("UsesServlet")
                .hasMessageContaining("jakarta.servlet.archfixture.ServletLike")
                .hasMessageContaining("SpringBootLineAware");
        assertThatCode(() -> ArchitectureRules.CORE_KNOWS_NO_SERVLET_NOR_BOOT_LINE.check(
                new ClassFileImporter().importClasses(ServiceConfig.class, RetryThrottle.class))).doesNotThrowAnyException();
    }

    @Test
    void cycleRuleFailsOnTwoPackagesThatUseEachOther() {
        JavaClasses bad = new ClassFileImporter().importClasses(A.class, B.class);
        assertThatThrownBy(() -> ArchitectureRules.NO_PACKAGE_CYCLES.check(bad))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("Cycle detected")
                .hasMessageContaining("archfixture.cycle.a")
                .hasMessageContaining("archfixture.cycle.b");
        assertThatCode(() -> ArchitectureRules.NO_PACKAGE_CYCLES.check(new ClassFileImporter().importClasses(A.class)))
                .doesNotThrowAnyException();
    }

    @Test
    void staticInitializerRuleFailsOnTwoClassesThatNeedEachOther() {
        assertThatThrownBy(() -> ArchitectureRules.NO_STATIC_INITIALIZER_CYCLES.check(
                new ClassFileImporter().importClasses(First.class, Second.class)))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("static initialisers in a cycle")
                .hasMessageContaining("archfixture.clinit.First")
                .hasMessageContaining("archfixture.clinit.Second");
        assertThatCode(() -> ArchitectureRules.NO_STATIC_INITIALIZER_CYCLES.check(
                new ClassFileImporter().importClasses(Field.class, Field.ONE.getClass(), Field.TWO.getClass())))
                .doesNotThrowAnyException();
    }

    /**
     * A cycle whose one half runs in code the static initialiser calls, not in its own body (a method of its class, a
     * helper class with no initialiser): two threads deadlock on it the same way, and the rule sees it.
     */
    @Test
    void staticInitializerRuleFollowsTheCodeTheInitialiserCalls() {
        assertThatThrownBy(() -> ArchitectureRules.NO_STATIC_INITIALIZER_CYCLES.check(new ClassFileImporter()
                .importClasses(ViaOwnMethodFirst.class, ViaOwnMethodSecond.class)))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("static initialisers in a cycle")
                .hasMessageContaining("archfixture.clinit.ViaOwnMethodFirst")
                .hasMessageContaining("archfixture.clinit.ViaOwnMethodSecond");
        assertThatThrownBy(() -> ArchitectureRules.NO_STATIC_INITIALIZER_CYCLES.check(new ClassFileImporter()
                .importClasses(ViaHelperFirst.class, ClinitHelper.class, ViaHelperSecond.class)))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("static initialisers in a cycle")
                .hasMessageContaining("archfixture.clinit.ViaHelperFirst")
                .hasMessageContaining("archfixture.clinit.ViaHelperSecond");
    }

    @Test
    void noInternalsRuleFailsOnAClassThatUsesAnInternalPackage() {
        JavaClasses bad = new ClassFileImporter().importClasses(UsesInternal.class, RetryBufferPool.class);
        assertThatThrownBy(() -> ArchitectureRules.AUTOCONFIGURE_USES_NO_INTERNALS.check(bad))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("UsesInternal")
                .hasMessageContaining("RetryBufferPool");
        assertThatCode(() -> ArchitectureRules.AUTOCONFIGURE_USES_NO_INTERNALS.check(
                new ClassFileImporter().importClasses(UsesApi.class, RetryThrottle.class))).doesNotThrowAnyException();
    }

    @Test
    void otherModulesInternalsRuleFailsOnAnInternalPackageOutsideTheClassesChecked() {
        // UsesInternal's module (the classes checked) has no internal package: RetryBufferPool's is another module's.
        assertThatThrownBy(() -> ArchitectureRules.NO_OTHER_MODULES_INTERNALS.check(
                new ClassFileImporter().importClasses(UsesInternal.class)))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("UsesInternal")
                .hasMessageContaining("RetryBufferPool");
        // A module's own internal package (one of the classes checked) is its own to use.
        assertThatCode(() -> ArchitectureRules.NO_OTHER_MODULES_INTERNALS.check(
                new ClassFileImporter().importClasses(UsesInternal.class, RetryBufferPool.class))).doesNotThrowAnyException();
    }

    @Test
    void publicApiRuleFailsOnApplicationCodeThatUsesAnInternalPackage() {
        String app = "io.github.grpcretry.archfixture.app..";
        JavaClasses bad = new ClassFileImporter().importClasses(UsesInternal.class, RetryBufferPool.class);
        assertThatThrownBy(() -> ArchitectureRules.usesOnlyThePublicApi(app).check(bad))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("UsesInternal")
                .hasMessageContaining("RetryBufferPool");
        assertThatCode(() -> ArchitectureRules.usesOnlyThePublicApi(app).check(
                new ClassFileImporter().importClasses(UsesApi.class, RetryThrottle.class))).doesNotThrowAnyException();
    }

    @Test
    void apiRuleFailsOnAPublicMethodThatReturnsAnInternalType() {
        assertThatThrownBy(() -> ArchitectureRules.API_EXPOSES_NO_INTERNALS.check(
                new ClassFileImporter().importClasses(ExposesInternal.class)))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("ExposesInternal.pushback()")
                .hasMessageContaining("io.github.grpcretry.internal.pushback.Pushback")
                .hasMessageNotContaining("hidden()");
        assertThatCode(() -> ArchitectureRules.API_EXPOSES_NO_INTERNALS.check(
                new ClassFileImporter().importClasses(ServiceConfig.class))).doesNotThrowAnyException();
    }
}
