package io.github.grpcretry.sample.springgrpc.lab;

import io.github.grpcretry.sample.lab.LabArgs;
import io.github.grpcretry.sample.lab.LabReport;
import io.github.grpcretry.sample.lab.LabTable;
import io.github.grpcretry.sample.lab.R1RetryPolicy;
import io.github.grpcretry.sample.lab.R2Throttling;
import io.github.grpcretry.sample.lab.R7TriedBackends;
import io.github.grpcretry.sample.lab.R8LongStreams;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Lab mode of the Spring Boot 4.1 sample: the lab's R1 (retryPolicy) and R2 (retryThrottling) tables,
 * the same experiments as the Spring Boot 3.5 sample's lab, run on Spring Boot 4.1 clients whose Spring
 * gRPC channels are configured twice: through {@code grpc.retry.*} (tables R1, R2) and through Spring
 * Boot's own {@code spring.grpc.client.channel.<name>.service-config}, which the engine takes over
 * (tables R1-boot, R2-boot); then R7 (avoiding tried backends) and R8 (long streams that resume) on the first route. Deterministic rows that deviate make {@link #main} exit with status 1.
 *
 * <p>Arguments: {@code --lab} (selects this mode in the sample's main), {@code --lab.engine=interceptor|native}
 * (default interceptor; {@code auto} means interceptor, which is always in this line's build),
 * {@code --lab.route=both|properties|boot} (default both), {@code --lab.out=<dir>} (default
 * {@code sample-spring-grpc/target/lab} from the repository root, {@code target/lab} otherwise),
 * {@code --lab.seed=<n>} (the servers' random seed, default 42), {@code --lab.r7.calls=<n>} (R7's calls per row,
 * default {@value R7TriedBackends#CALLS}).
 */
public final class SpringGrpcLab {

    public static final long DEFAULT_SEED = 42;

    /** How to run the lab. */
    public record Options(String engine, List<SpringGrpcLabClients.Route> routes, Path out, long seed, int r7Calls) {

        public static Options parse(String[] args) {
            String engine = LabArgs.value(args, "engine", "interceptor");
            String route = LabArgs.value(args, "route", "both");
            List<SpringGrpcLabClients.Route> routes = switch (route) {
                case "both" -> List.of(SpringGrpcLabClients.Route.PROPERTIES, SpringGrpcLabClients.Route.BOOT);
                case "properties" -> List.of(SpringGrpcLabClients.Route.PROPERTIES);
                case "boot" -> List.of(SpringGrpcLabClients.Route.BOOT);
                default -> throw new IllegalArgumentException("--lab.route is both, properties or boot, not " + route);
            };
            return new Options("auto".equals(engine) ? "interceptor" : engine, routes,
                    LabArgs.out(args, "sample-spring-grpc"), LabArgs.seed(args, DEFAULT_SEED),
                    Integer.parseInt(LabArgs.value(args, "r7.calls", Integer.toString(R7TriedBackends.CALLS))));
        }
    }

    private SpringGrpcLab() {
    }

    public static void main(String[] args) {
        Options options = Options.parse(args);
        System.exit(run(options).print(options.out()));
    }

    /** Runs R1 and R2 on each route, then R7 and R8 on the first, and returns the tables (does not print or write). */
    public static LabReport run(Options options) {
        long start = System.nanoTime();
        List<LabTable> tables = new ArrayList<>();
        // sequential: R1 measures backoffs, so nothing runs beside it
        for (SpringGrpcLabClients.Route route : options.routes()) {
            SpringGrpcLabClients clients = new SpringGrpcLabClients(options.engine(), route);
            timed("R1 through " + clients.route(), () -> tables.add(R1RetryPolicy.run(clients, options.seed())));
            timed("R2 through " + clients.route(), () -> tables.add(R2Throttling.run(clients, options.seed())));
        }
        // the service config's route plays no part in R7 or R8: one route is enough
        SpringGrpcLabClients first = new SpringGrpcLabClients(options.engine(), options.routes().get(0));
        timed("R7 through " + first.route(), () -> tables.add(R7TriedBackends.run(first, options.seed(), options.r7Calls())));
        timed("R8 through " + first.route(), () -> tables.add(R8LongStreams.run(first, options.seed())));
        return new LabReport(options.engine(), "Spring Boot 4.1, Spring gRPC channels", tables,
                (System.nanoTime() - start) / 1_000_000);
    }

    private static void timed(String what, Runnable r) {
        long t = System.nanoTime();
        r.run();
        System.out.printf("lab: %s done in %.1f s%n", what, (System.nanoTime() - t) / 1e9);
    }
}
