package io.github.grpcretry.archfixture.bootline;

/** Test fixture only: a grpc-retry class whose name says it knows about Spring Boot lines. */
public final class SpringBootLineAware {

    public static String line() {
        return "3.5";
    }
}
