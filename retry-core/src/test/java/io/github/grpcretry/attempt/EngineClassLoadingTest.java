package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What a start-up loads of the engine (docs/benchmarks.md, "Start-up cost"): the Spring Boot lines call the
 * interceptor's static helpers while the context starts, which links the interceptor class; that must load none
 * of the engine's call classes, which only a channel's first call needs. retry-core's classes are loaded afresh
 * by a class loader of their own, so what this JVM's other tests loaded does not count.
 */
class EngineClassLoadingTest {

    static final List<String> CALL_CLASSES = List.of(EngineCall.class.getName(), RetryingCall.class.getName(),
            HedgingCall.class.getName());

    /** Loads retry-core's own classes itself (child first); everything else from the test's class path. */
    static final class OwnLoader extends URLClassLoader {
        OwnLoader(URL classes) {
            super(new URL[] {classes}, EngineClassLoadingTest.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith("io.github.grpcretry.")) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    try {
                        c = findClass(name);
                    } catch (ClassNotFoundException e) {
                        return super.loadClass(name, resolve); // a test class, not retry-core's
                    }
                }
                return c;
            }
        }

        boolean loaded(String name) {
            return findLoadedClass(name) != null;
        }
    }

    @Test
    void theInterceptorsStaticHelpersLoadNoCallClass() throws Exception {
        URL classes = RetryingClientInterceptor.class.getProtectionDomain().getCodeSource().getLocation();
        try (OwnLoader loader = new OwnLoader(classes)) {
            Class<?> interceptor = Class.forName(RetryingClientInterceptor.class.getName(), true, loader);
            assertThat(interceptor.getClassLoader()).isSameAs(loader);
            Method helper = interceptor.getMethod("avoidingTriedBackends", Map.class, String.class);
            Object wrapped = helper.invoke(null, Map.of(), null);
            assertThat(wrapped).asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
                    .containsKey("loadBalancingConfig");

            assertThat(CALL_CLASSES).allSatisfy(name -> assertThat(loader.loaded(name)).as(name).isFalse());

            // the check can fail: a call class made through the same loader is seen as loaded
            Class.forName(RetryingCall.class.getName(), false, loader);
            assertThat(loader.loaded(RetryingCall.class.getName())).isTrue();
        }
    }
}
