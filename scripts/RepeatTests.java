import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.PrintWriter;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Runs test classes N times in a row in one JVM and prints one line per class and run; exits non-zero
 * when any run failed. Used by repeat-tests.sh to show that a concurrency test holds run after run.
 */
public final class RepeatTests {

    public static void main(String[] args) throws Exception {
        int runs = Integer.parseInt(args[0]);
        int failedRuns = 0;
        Launcher launcher = LauncherFactory.create();
        for (int i = 1; i <= runs; i++) {
            for (int k = 1; k < args.length; k++) {
                LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                        .selectors(selectClass(Class.forName(args[k]))).build();
                SummaryGeneratingListener listener = new SummaryGeneratingListener();
                long start = System.nanoTime();
                launcher.execute(request, listener);
                TestExecutionSummary s = listener.getSummary();
                String name = args[k].substring(args[k].lastIndexOf('.') + 1);
                System.out.printf("run %2d %s: %d tests, %d failed, %d ms%n", i, name, s.getTestsFoundCount(),
                        s.getTotalFailureCount(), (System.nanoTime() - start) / 1_000_000);
                if (s.getTotalFailureCount() > 0) {
                    failedRuns++;
                    s.printFailuresTo(new PrintWriter(System.out, true), 30);
                }
            }
        }
        System.out.println(failedRuns == 0 ? "all runs passed" : failedRuns + " failed run(s)");
        System.exit(failedRuns == 0 ? 0 : 1);
    }
}
