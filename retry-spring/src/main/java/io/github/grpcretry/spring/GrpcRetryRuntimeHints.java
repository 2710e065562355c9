package io.github.grpcretry.spring;

import io.github.grpcretry.spring.bootline.SpringBootLineCheck;
import io.github.grpcretry.spring.report.RetryReport;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.boot.context.properties.bind.BindableRuntimeHintsRegistrar;
import org.springframework.util.ClassUtils;

/**
 * What the starter loads by name or reflects on, for Spring AOT (registered in
 * {@code META-INF/spring/aot.factories}; a native image needs these, a JVM started from AOT-generated code
 * does not):
 * <ul>
 *   <li>the operations kit's files, {@code META-INF/grpc-retry/ops/**} (alert rules, their tests, the
 *       dashboard), read as class-path resources;</li>
 *   <li>the connect timeout: Netty's {@code ChannelOption.CONNECT_TIMEOUT_MILLIS} and
 *       {@code NettyChannelBuilder.withOption}, plain and shaded, looked up by name
 *       ({@code ChannelSetup.applyConnectTimeout});</li>
 *   <li>the target and delegate of grpc-java's channel builders, read to put a name resolver's service
 *       config under the starter's control ({@code PolicySources});</li>
 *   <li>the classes whose presence tells the Spring Boot line ({@code SpringBootLineCheck});</li>
 *   <li>each line's bound {@code grpc.retry} properties, whose getters are read by name
 *       ({@code BoundProperties}), and the health details' record, written as JSON.</li>
 * </ul>
 * The {@code grpcretry} endpoint answers maps of strings, numbers, booleans and lists: nothing to
 * reflect on. The service-config JSON is read as a tree (Gson's {@code JsonParser}): no reflection either.
 */
class GrpcRetryRuntimeHints implements RuntimeHintsRegistrar {

    /** The operations kit's files in retry-core's jar. */
    static final String OPS_RESOURCES = "META-INF/grpc-retry/ops/**";

    static final List<String> NETTY_PACKAGES = List.of("io.grpc.netty.shaded.io.", "io.");

    /** The channel builders whose target (or delegate) is read. */
    static final List<String> BUILDERS_WITH_DELEGATE = List.of("io.grpc.netty.NettyChannelBuilder",
            "io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder", "io.grpc.inprocess.InProcessChannelBuilder",
            "io.grpc.okhttp.OkHttpChannelBuilder");

    static final String IMPL_BUILDER = "io.grpc.internal.ManagedChannelImplBuilder";

    /** Each line's bound properties. */
    static final List<String> PROPERTIES = List.of("io.github.grpcretry.autoconfigure.GrpcRetryProperties",
            "io.github.grpcretry.springgrpc.GrpcRetryProperties");

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        hints.resources().registerPattern(OPS_RESOURCES);
        for (String prefix : NETTY_PACKAGES) {
            TypeReference option = TypeReference.of(prefix + "netty.channel.ChannelOption");
            hints.reflection().registerType(option, b -> b.withField("CONNECT_TIMEOUT_MILLIS"));
            String builder = prefix.equals("io.") ? "io.grpc.netty.NettyChannelBuilder"
                    : "io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder";
            hints.reflection().registerType(TypeReference.of(builder), b -> b.withMethod("withOption",
                    List.of(option, TypeReference.of(Object.class)), ExecutableMode.INVOKE));
        }
        for (String builder : BUILDERS_WITH_DELEGATE) {
            hints.reflection().registerType(TypeReference.of(builder),
                    b -> b.withMethod("delegate", List.of(), ExecutableMode.INVOKE));
        }
        hints.reflection().registerType(TypeReference.of(IMPL_BUILDER),
                b -> b.withField("target").withField("directServerAddress"));
        for (String name : List.of(SpringBootLineCheck.BOOT4_CLASS, SpringBootLineCheck.NET_DEVH_CLIENT_CLASS,
                SpringBootLineCheck.NET_DEVH_SERVER_CLASS, SpringBootLineCheck.BOOT3_LINE_CLASS,
                SpringBootLineCheck.BOOT4_LINE_CLASS)) {
            hints.reflection().registerType(TypeReference.of(name));
        }
        for (String name : PROPERTIES) {
            if (ClassUtils.isPresent(name, classLoader)) {
                BindableRuntimeHintsRegistrar.forTypes(ClassUtils.resolveClassName(name, classLoader))
                        .registerHints(hints, classLoader);
                hints.reflection().registerType(TypeReference.of(name), MemberCategory.INVOKE_PUBLIC_METHODS);
            }
        }
        new BindingReflectionHintsRegistrar().registerReflectionHints(hints.reflection(), RetryReport.HealthDetails.class);
    }
}
