package io.github.grpcretry.spring.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.config.RetryConfigResolver;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.spring.SpringBoundValues;
import io.github.grpcretry.spring.report.RetryReport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * Channel-wide properties on their one typed path: bound by Spring's binder into {@code GrpcRetryClientProperties},
 * handed to the resolver by {@link SpringBoundValues}, inherited from GLOBAL field by field, validated by the
 * channel-wide field table with the property path of each value, and shown by the endpoint. {@code streams.*} is
 * the property the recipe (docs/design.md, "Adding a channel-wide property") was measured with.
 */
class ChannelWidePropertiesTest {

    /** The configurations of the channels that {@code properties} (keys under grpc.retry) configure. */
    private static ChannelRetryConfigs resolve(List<String> warnings, boolean nativeEngine, String... properties) {
        Map<String, String> source = new LinkedHashMap<>();
        for (String p : properties) {
            int eq = p.indexOf('=');
            source.put(p.substring(0, eq), p.substring(eq + 1));
        }
        GrpcRetryProperties bound = new Binder(new MapConfigurationPropertySource(source))
                .bind(GrpcRetryProperties.PREFIX, GrpcRetryProperties.class).get();
        RetryConfigResolver resolver = RetryConfigResolver.create().warnings(warnings::add).nativeEngine(nativeEngine);
        bound.clients().forEach((key, client) -> resolver.client(key, SpringBoundValues.client(client)));
        return resolver.resolve();
    }

    private static ChannelRetryConfigs resolve(String... properties) {
        return resolve(new ArrayList<>(), false, properties);
    }

    @Test
    void streamsDefaultToNoIdleTimeoutAndThreeResumes() {
        ChannelRetryConfig svc = resolve("grpc.retry.clients.svc.max-attempts-cap=4").forChannel("svc");
        assertThat(svc.streams()).isEqualTo(ChannelRetryConfig.Streams.DEFAULT);
        assertThat(svc.streams().idleTimeout()).isNull();
        assertThat(svc.streams().maxResumes()).isEqualTo(3);
    }

    @Test
    void streamsAreBoundAndInheritedFromGlobalFieldByField() {
        ChannelRetryConfigs configs = resolve(
                "grpc.retry.clients.GLOBAL.streams.idle-timeout=30s",
                "grpc.retry.clients.GLOBAL.streams.max-resumes=5",
                "grpc.retry.clients.svc.streams.max-resumes=0",
                "grpc.retry.clients.other.streams.idle-timeout=250ms");
        assertThat(configs.forChannel("svc").streams())
                .isEqualTo(new ChannelRetryConfig.Streams(Duration.ofSeconds(30), 0));
        assertThat(configs.forChannel("other").streams())
                .isEqualTo(new ChannelRetryConfig.Streams(Duration.ofMillis(250), 5));
        // a channel without an entry of its own gets GLOBAL's
        assertThat(configs.forChannel("unnamed").streams())
                .isEqualTo(new ChannelRetryConfig.Streams(Duration.ofSeconds(30), 5));
    }

    @Test
    void invalidStreamsValuesAreReportedTogetherAtTheirPaths() {
        InvalidRetryConfigurationException e = catchThrowableOfType(InvalidRetryConfigurationException.class,
                () -> resolve("grpc.retry.clients.svc.streams.idle-timeout=-1s",
                        "grpc.retry.clients.GLOBAL.streams.max-resumes=-1"));
        assertThat(e.getProblems()).extracting(ConfigProblem::path, ConfigProblem::value, ConfigProblem::rule)
                .containsExactlyInAnyOrder(
                        Tuple.tuple("grpc.retry.clients.GLOBAL.streams.max-resumes", "-1",
                                "streams.max-resumes must be >= 0"),
                        Tuple.tuple("grpc.retry.clients.svc.streams.idle-timeout", "-1s",
                                "streams.idle-timeout must be > 0"));
        assertThat(e.getProblems()).allSatisfy(p -> assertThat(p.fix()).isNotBlank());

        InvalidRetryConfigurationException zero = catchThrowableOfType(InvalidRetryConfigurationException.class,
                () -> resolve("grpc.retry.clients.svc.streams.idle-timeout=0s"));
        assertThat(zero.getProblems()).extracting(ConfigProblem::path)
                .containsExactly("grpc.retry.clients.svc.streams.idle-timeout");
    }

    @Test
    void theEndpointShowsTheStreamsSettings() {
        ChannelRetryConfigs configs = resolve("grpc.retry.clients.GLOBAL.streams.idle-timeout=1500ms",
                "grpc.retry.clients.svc.streams.max-resumes=1");
        assertThat(RetryReport.config(configs.forChannel("svc")))
                .containsEntry("streams", Map.of("idleTimeout", "1500ms", "maxResumes", 1));
        assertThat(RetryReport.config(ChannelRetryConfig.of("plain", ServiceConfig.EMPTY)))
                .containsEntry("streams", Map.of("maxResumes", 3));
    }

    @Test
    void theNativeEngineWarnsOnceNamingEveryStreamsProperty() {
        List<String> warnings = new ArrayList<>();
        resolve(warnings, true, "grpc.retry.clients.GLOBAL.streams.max-resumes=0",
                "grpc.retry.clients.svc.streams.idle-timeout=10s");
        List<String> streams = warnings.stream().filter(w -> w.startsWith("streams is ignored")).toList();
        assertThat(streams).hasSize(1);
        assertThat(streams.get(0)).startsWith("streams is ignored: grpc.retry.engine=native (grpc-java's own retry)"
                        + " neither cancels an idle streaming attempt nor resumes a stream after its commit. Set at: ")
                .contains("grpc.retry.clients.GLOBAL.streams.max-resumes = 0",
                        "grpc.retry.clients.svc.streams.idle-timeout = 10s")
                .endsWith(". Use grpc.retry.engine=interceptor to have it applied, or remove it");

        List<String> none = new ArrayList<>();
        resolve(none, true, "grpc.retry.clients.svc.max-attempts-cap=3");
        assertThat(none).noneMatch(w -> w.contains("is ignored"));
        List<String> interceptor = new ArrayList<>();
        resolve(interceptor, false, "grpc.retry.clients.svc.streams.idle-timeout=10s");
        assertThat(interceptor).isEmpty();
    }
}
