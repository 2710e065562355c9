package io.github.grpcretry.benchmarks;

/** Where the server is: in the same JVM without a network stack, or over Netty on 127.0.0.1. */
public enum Transport {
    IN_PROCESS,
    NETTY
}
