package io.github.grpcretry.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.spring.bootline.SpringBootLineCheck;
import io.github.grpcretry.spring.report.RetryReport;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeHint;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.util.ClassUtils;

/**
 * The starter's AOT hints, as Spring's AOT processing finds them (through {@code META-INF/spring/aot.factories}):
 * each thing the starter loads by name or reflects on is covered, so removing a hint fails here.
 */
class GrpcRetryRuntimeHintsTest {

    private final RuntimeHints hints = registered();

    private static RuntimeHints registered() {
        RuntimeHints hints = new RuntimeHints();
        List<RuntimeHintsRegistrar> registrars = SpringFactoriesLoader.forResourceLocation("META-INF/spring/aot.factories")
                .load(RuntimeHintsRegistrar.class);
        assertThat(registrars).hasAtLeastOneElementOfType(GrpcRetryRuntimeHints.class);
        registrars.forEach(r -> r.registerHints(hints, ClassUtils.getDefaultClassLoader()));
        return hints;
    }

    private boolean hasField(String type, String field) {
        TypeHint hint = hints.reflection().getTypeHint(TypeReference.of(type));
        return hint != null && hint.fields().anyMatch(f -> f.getName().equals(field));
    }

    @Test
    void theOperationsKitFilesAreResources() {
        for (String file : List.of("prometheus/grpc-retry-alerts.yml", "prometheus/grpc-retry-alerts-test.yml",
                "grafana/grpc-retry-dashboard.json")) {
            assertThat(RuntimeHintsPredicates.resource().forResource("META-INF/grpc-retry/ops/" + file))
                    .accepts(hints);
        }
    }

    @Test
    void theConnectTimeoutsReflectionIsDeclared() throws Exception {
        for (String prefix : List.of("io.grpc.netty.shaded.io.", "io.")) {
            assertThat(hasField(prefix + "netty.channel.ChannelOption", "CONNECT_TIMEOUT_MILLIS")).as(prefix).isTrue();
        }
        assertThat(RuntimeHintsPredicates.reflection()
                .onMethod(NettyChannelBuilder.class.getMethod("withOption", ChannelOption.class, Object.class))
                .invoke()).accepts(hints);
        assertThat(hints.reflection().getTypeHint(TypeReference.of("io.grpc.netty.NettyChannelBuilder"))).isNotNull();
    }

    @Test
    void theChannelBuildersTargetAndDelegateAreDeclared() throws Exception {
        assertThat(hasField("io.grpc.internal.ManagedChannelImplBuilder", "target")).isTrue();
        assertThat(hasField("io.grpc.internal.ManagedChannelImplBuilder", "directServerAddress")).isTrue();
        for (Class<?> builder : List.of(NettyChannelBuilder.class, InProcessChannelBuilder.class)) {
            assertThat(RuntimeHintsPredicates.reflection().onMethod(builder.getDeclaredMethod("delegate")).invoke())
                    .as(builder.getName()).accepts(hints);
        }
    }

    @Test
    void theSpringBootLinesClassesAreDeclared() {
        for (String name : List.of(SpringBootLineCheck.BOOT4_CLASS, SpringBootLineCheck.NET_DEVH_CLIENT_CLASS,
                SpringBootLineCheck.NET_DEVH_SERVER_CLASS, SpringBootLineCheck.BOOT3_LINE_CLASS,
                SpringBootLineCheck.BOOT4_LINE_CLASS)) {
            assertThat(RuntimeHintsPredicates.reflection().onType(TypeReference.of(name))).as(name).accepts(hints);
        }
    }

    @Test
    void theHealthDetailsRecordIsDeclaredForJson() throws Exception {
        Predicate<RuntimeHints> accessor = RuntimeHintsPredicates.reflection()
                .onMethod(RetryReport.HealthDetails.class.getMethod("channels")).invoke();
        assertThat(accessor).accepts(hints);
    }
}
