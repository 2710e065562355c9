#!/usr/bin/env python3
"""Lock sections the interceptor engine takes per unary call that succeeds at once, in-process and over Netty.

Copies retry-core of a commit into a temporary directory, counts every entry into a `synchronized` block or
method of the engine's call classes (EngineCall, RetryingCall, HedgingCall, ObservedCall) there, and runs
5,000 blocking unary calls after 2,000 warm-up calls through the engine (throttle and budget on, a
direct-executor server); prints the sections per call and where they are (file:line of the copy).
The counting is in the copy only; the repository's engine is not changed.

  python3 scripts/lock-sections.py [COMMIT]     # default HEAD; ~2 min (compiles retry-core)
"""
import pathlib
import re
import subprocess
import sys
import tempfile

PROBE = r'''package io.github.grpcretry.attempt;

import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LockSectionsProbeTest {
    @Test
    void count() throws Exception {
        SimpleRequest request = SimpleRequest.newBuilder().setRequestMessage("0123456789abcdef").build();
        SimpleServiceGrpc.SimpleServiceImplBase service = new SimpleServiceGrpc.SimpleServiceImplBase() {
            @Override
            public void unaryRpc(SimpleRequest r, StreamObserver<SimpleResponse> out) {
                out.onNext(SimpleResponse.newBuilder().setResponseMessage(r.getRequestMessage()).build());
                out.onCompleted();
            }
        };
        String name = "lock-sections";
        Server inProcess = InProcessServerBuilder.forName(name).directExecutor().addService(service).build().start();
        Server netty = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).directExecutor()
                .addService(service).build().start();
        ChannelRetryConfig config = Configs.channel(Configs.service(Configs.policy(4, 1, 8, 2,
                Status.Code.UNAVAILABLE), new RetryThrottlingPolicy(10, 1)), 1 << 20, 16 << 20,
                new RetryBudgetPolicy(0.5, 10, Duration.ofSeconds(10)));
        RetryingClientInterceptor engine = RetryingClientInterceptor.builder(config)
                .throttle(new RetryThrottle(config.serviceConfig().retryThrottling()))
                .budget(new RetryBudget(config.budget())).build();
        for (String transport : new String[] {"in-process", "netty"}) {
            ManagedChannelBuilder<?> b = transport.equals("netty")
                    ? NettyChannelBuilder.forTarget("127.0.0.1:" + netty.getPort()).usePlaintext()
                    : InProcessChannelBuilder.forName(name);
            ManagedChannel channel = b.defaultServiceConfig(config.serviceConfig().withoutRetry()
                    .toServiceConfigMap(false)).intercept(engine).build();
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(channel);
            for (int i = 0; i < 2000; i++) {
                stub.unaryRpc(request);
            }
            long before = LockSections.ALL.sum();
            LockSections.SITES.clear();
            int calls = 5000;
            for (int i = 0; i < calls; i++) {
                stub.unaryRpc(request);
            }
            TreeMap<String, Double> perCall = new TreeMap<>();
            LockSections.SITES.forEach((k, v) -> perCall.put(k, v.sum() / (double) calls));
            System.out.println("LOCK-SECTIONS " + transport + " " + (LockSections.ALL.sum() - before) / (double) calls
                    + " per call " + perCall);
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        inProcess.shutdownNow();
        netty.shutdownNow();
    }
}
'''

COUNTER = '''package io.github.grpcretry.attempt;

final class LockSections {
    static final java.util.concurrent.atomic.LongAdder ALL = new java.util.concurrent.atomic.LongAdder();
    static final java.util.concurrent.ConcurrentHashMap<String, java.util.concurrent.atomic.LongAdder> SITES =
            new java.util.concurrent.ConcurrentHashMap<>();

    static void enter(String site) {
        ALL.increment();
        SITES.computeIfAbsent(site, k -> new java.util.concurrent.atomic.LongAdder()).increment();
    }
}
'''


def instrument(root):
    engine = root / "retry-core/src/main/java/io/github/grpcretry/attempt"
    for name in ["EngineCall.java", "RetryingCall.java", "HedgingCall.java", "ObservedCall.java"]:
        path = engine / name
        if not path.exists():
            continue
        lines = path.read_text().split("\n")
        for i, line in enumerate(lines):
            hit = ' LockSections.enter("%s:%d");' % (name[:-5], i + 1)
            block = re.sub(r"(synchronized \((?:this|EngineCall\.this)\) \{)", r"\1" + hit, line)
            if block == line:
                block = re.sub(r"^(\s+(?:private |final |public |protected )*synchronized [^;{=(]*\([^)]*\) \{)",
                               r"\1" + hit, line)
            lines[i] = block
        path.write_text("\n".join(lines))
    (engine / "LockSections.java").write_text(COUNTER)
    (root / "retry-core/src/test/java/io/github/grpcretry/attempt/LockSectionsProbeTest.java").write_text(PROBE)


def main():
    commit = sys.argv[1] if len(sys.argv) > 1 else "HEAD"
    repo = pathlib.Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        archive = subprocess.run(["git", "-C", str(repo), "archive", commit, "pom.xml", "mvnw", ".mvn", "retry-core"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        instrument(root)
        subprocess.run(["./mvnw", "-B", "-q", "-f", "retry-core/pom.xml", "test", "-Dtest=LockSectionsProbeTest",
                        "-Dsurefire.failIfNoSpecifiedTests=false", "-Djapicmp.skip=true", "-Dpublish.skip=true"],
                       cwd=tmp, check=True, stdout=subprocess.DEVNULL)
        reports = root / "retry-core/target/surefire-reports"
        for report in reports.glob("*LockSectionsProbeTest-output.txt"):
            for line in report.read_text().splitlines():
                if line.startswith("LOCK-SECTIONS"):
                    print(commit, line[len("LOCK-SECTIONS "):])


if __name__ == "__main__":
    main()
