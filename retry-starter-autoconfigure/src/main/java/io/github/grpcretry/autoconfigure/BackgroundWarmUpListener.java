package io.github.grpcretry.autoconfigure;

import io.github.grpcretry.spring.BackgroundWarmUp;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.boot.context.event.ApplicationFailedEvent;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.context.event.SpringApplicationEvent;
import org.springframework.boot.context.logging.LoggingApplicationListener;
import org.springframework.context.ApplicationListener;
import org.springframework.core.NativeDetector;
import org.springframework.core.Ordered;

/**
 * Runs the starter's {@link BackgroundWarmUp} on a thread of its own once per JVM, from the moment the first
 * application's environment is prepared, by Spring Boot's own rules for its background pre-initialisation
 * (Spring Boot 3.5 has no extension point for it; 4.1's line registers a {@code BackgroundPreinitializer}):
 * not with one processor, not in a native image, not with the system property
 * {@code spring.backgroundpreinitializer.ignore=true}; an application's ready or failed event waits for it, so
 * that it never outlives a start.
 */
final class BackgroundWarmUpListener implements ApplicationListener<SpringApplicationEvent>, Ordered {

    private static final Log log = LogFactory.getLog(BackgroundWarmUpListener.class);
    private static final AtomicBoolean started = new AtomicBoolean();
    private static final CountDownLatch done = new CountDownLatch(1);

    private final boolean enabled = !NativeDetector.inNativeImage()
            && !Boolean.getBoolean("spring.backgroundpreinitializer.ignore")
            && Runtime.getRuntime().availableProcessors() > 1;

    @Override
    public int getOrder() {
        return LoggingApplicationListener.DEFAULT_ORDER + 2;
    }

    @Override
    public void onApplicationEvent(SpringApplicationEvent event) {
        if (!enabled) {
            return;
        }
        if (event instanceof ApplicationEnvironmentPreparedEvent && started.compareAndSet(false, true)) {
            try {
                Thread thread = new Thread(BackgroundWarmUpListener::runOnce, "grpc-retry-warm-up");
                thread.setDaemon(true);
                thread.start();
            } catch (RuntimeException | Error e) { // no thread: the main thread does it all, as without the warm-up
                done.countDown();
            }
        }
        if ((event instanceof ApplicationReadyEvent || event instanceof ApplicationFailedEvent) && started.get()) {
            try {
                done.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void runOnce() {
        try {
            warmUp();
        } catch (Throwable e) { // its classes or the sample: the main thread's own work is unchanged
            log.debug("The gRPC retry starter's start-up warm-up failed", e);
        } finally {
            done.countDown();
        }
    }

    /** This line's warm-up: its configuration classes linked, the sample bound and resolved by its resolution. */
    static void warmUp() throws Exception {
        BackgroundWarmUp.link(GrpcRetryAutoConfiguration.class);
        BackgroundWarmUp.run((properties, environment, beans) ->
                GrpcRetryAutoConfiguration.Client.resolve(properties, List.of(), environment, beans));
    }
}
