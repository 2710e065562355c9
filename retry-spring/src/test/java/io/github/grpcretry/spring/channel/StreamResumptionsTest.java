package io.github.grpcretry.spring.channel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.attempt.StreamResumption;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.spring.report.RetryReport;
import io.github.grpcretry.testing.FixedChannelRetryConfigs;
import io.grpc.MethodDescriptor;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The application's {@code StreamResumption} beans as the Boot lines take them: every problem of a set of beans at
 * once, the native engine's one warning, and what the endpoint shows per channel and engine.
 */
class StreamResumptionsTest {

    static final String STREAMING = SimpleServiceGrpc.getServerStreamingRpcMethod().getFullMethodName();

    /** A resumption of {@code method} that is never started (these tests build no call). */
    record Named(MethodDescriptor<SimpleRequest, SimpleResponse> method) implements StreamResumption<SimpleRequest, SimpleResponse> {
        @Override
        public Resumer<SimpleRequest, SimpleResponse> start(SimpleRequest request) {
            throw new AssertionError("not called");
        }
    }

    static Map<String, StreamResumption<?, ?>> beans(Object... nameAndMethod) {
        Map<String, StreamResumption<?, ?>> beans = new LinkedHashMap<>();
        for (int i = 0; i < nameAndMethod.length; i += 2) {
            @SuppressWarnings("unchecked")
            MethodDescriptor<SimpleRequest, SimpleResponse> m = (MethodDescriptor<SimpleRequest, SimpleResponse>) nameAndMethod[i + 1];
            beans.put((String) nameAndMethod[i], new Named(m));
        }
        return beans;
    }

    @Test
    void everyBadBeanIsReportedAtOnceWithItsName() {
        InvalidRetryConfigurationException e = catchThrowableOfType(InvalidRetryConfigurationException.class,
                () -> StreamResumptions.of(beans("unary", SimpleServiceGrpc.getUnaryRpcMethod(),
                        "first", SimpleServiceGrpc.getServerStreamingRpcMethod(),
                        "bidi", SimpleServiceGrpc.getBidiStreamingRpcMethod(),
                        "second", SimpleServiceGrpc.getServerStreamingRpcMethod()),
                        ChannelSetup.Engine.INTERCEPTOR, w -> { }));
        assertThat(e.getProblems()).extracting(p -> p.path() + " = " + p.value()).containsExactly(
                "StreamResumption bean 'unary' (" + Named.class.getName() + ") = grpc.testing.SimpleService/UnaryRpc (UNARY)",
                "StreamResumption bean 'bidi' (" + Named.class.getName()
                        + ") = grpc.testing.SimpleService/BidiStreamingRpc (BIDI_STREAMING)",
                "StreamResumption bean 'first' (" + Named.class.getName() + ") and StreamResumption bean 'second' ("
                        + Named.class.getName() + ") = " + STREAMING);
    }

    @Test
    void theNativeEngineWarnsOnceNamingTheMethodsAndTheInterceptorEngineNever() {
        List<String> warnings = new ArrayList<>();
        StreamResumptions r = StreamResumptions.of(beans("feed", SimpleServiceGrpc.getServerStreamingRpcMethod()),
                ChannelSetup.Engine.NATIVE, warnings::add);
        assertThat(warnings).hasSize(1);
        assertThat(warnings.get(0)).startsWith("StreamResumption beans for " + STREAMING + " are not applied");
        assertThat(r.all()).hasSize(1);
        StreamResumptions.of(beans("feed", SimpleServiceGrpc.getServerStreamingRpcMethod()), ChannelSetup.Engine.INTERCEPTOR,
                warnings::add);
        StreamResumptions.of(Map.of(), ChannelSetup.Engine.NATIVE, warnings::add);
        assertThat(warnings).hasSize(1);
    }

    @Test
    void theEndpointShowsEachChannelsResumptionsAsItsEngineAppliesThem() {
        ChannelRetryConfig on = ChannelRetryConfig.of("on", ServiceConfig.EMPTY);
        ChannelRetryConfig off = ChannelRetryConfig.of("off", ServiceConfig.EMPTY)
                .withStreams(new ChannelRetryConfig.Streams(null, 0));
        FixedChannelRetryConfigs configs = new FixedChannelRetryConfigs(on, off);
        StreamResumptions r = StreamResumptions.of(beans("feed", SimpleServiceGrpc.getServerStreamingRpcMethod()),
                ChannelSetup.Engine.INTERCEPTOR, w -> { });
        RetryReport interceptor = new RetryReport(ChannelSetup.Engine.INTERCEPTOR, () -> configs, () -> null, () -> null,
                () -> null, () -> null, () -> null, () -> r);
        assertThat(interceptor.endpoint("on")).containsEntry("streamResumptions", Map.of(STREAMING, Named.class.getName()));
        assertThat(interceptor.endpoint("off")).containsEntry("streamResumptions", "off: streams.max-resumes is 0");
        RetryReport nativeEngine = new RetryReport(ChannelSetup.Engine.NATIVE, () -> configs, () -> null, () -> null,
                () -> null, () -> null, () -> null, () -> r);
        assertThat(nativeEngine.endpoint("on")).containsEntry("streamResumptions", RetryReport.NOT_APPLIED_NATIVE);
        RetryReport none = new RetryReport(ChannelSetup.Engine.INTERCEPTOR, () -> configs, () -> null, () -> null,
                () -> null, () -> null, () -> null, () -> StreamResumptions.NONE);
        assertThat(none.endpoint("on")).doesNotContainKey("streamResumptions");
    }
}
