package io.github.grpcretry.springgrpc;

import static io.github.grpcretry.springgrpc.testing.GrpcClientContext.request;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.fail;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static io.github.grpcretry.testing.Texts.occurrences;

import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.springgrpc.testing.GrpcServerContext;
import io.github.grpcretry.springgrpc.testing.ScriptedService;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.grpc.client.GrpcChannelFactory;

/**
 * Configuration at its edges on Spring Boot 4.1 (issue 40): the master switch read as Spring's binder reads
 * it, channel entries matched to channels as Spring's relaxed binding matches keys, the reserved GLOBAL name,
 * values of a feature that is off, the service-config file's size limit, and values that make no sense
 * together. Each case is a real context and one failing call to a scripted server whose arrivals are
 * counted, or the start-up report as the console shows it.
 */
@ExtendWith(OutputCaptureExtension.class)
class ConfigurationEdgesContextTest {

    private static final AtomicInteger KEYS = new AtomicInteger();

    static ScriptedService service;
    static GrpcServerContext server;

    @BeforeAll
    static void start() {
        service = new ScriptedService((key, n) -> fail(Status.Code.UNAVAILABLE));
        server = GrpcServerContext.start(service);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** Properties of a channel {@code channel} aimed at the scripted server, with a 4-attempt policy under {@code entry}. */
    static List<String> fourAttempts(String channel, String entry) {
        String r = "grpc.retry.clients." + entry + ".service-config.method[0].retry.";
        return new ArrayList<>(List.of("spring.grpc.client.channel." + channel + ".target=" + server.nettyTarget(),
                r + "max-attempts=4", r + "initial-backoff=1ms", r + "max-backoff=2ms", r + "backoff-multiplier=2",
                r + "retryable-status-codes=UNAVAILABLE"));
    }

    /** One call on {@code channel} that fails with UNAVAILABLE: the arrivals it made at the server. */
    static int arrivals(GrpcClientContext client, String channel) {
        String key = "edges-" + KEYS.incrementAndGet();
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                () -> SimpleServiceGrpc.newBlockingStub(client.channel(channel)).unaryRpc(request(key)));
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        return service.count(key);
    }

    static int arrivals(List<String> properties, Map<String, Object> environment, String channel) {
        try (GrpcClientContext client = GrpcClientContext.start(List.of(), environment, properties.toArray(String[]::new))) {
            return arrivals(client, channel);
        }
    }

    static int arrivals(List<String> properties, String channel) {
        return arrivals(properties, Map.of(), channel);
    }

    /** The start-up report Spring Boot prints for a context that fails to start with these properties. */
    static String report(List<String> properties, Map<String, Object> environment, Object... beans) {
        Throwable failure = catchThrowable(() -> GrpcClientContext.start(List.of(beans), environment,
                properties.toArray(String[]::new)).close());
        assertThat(failure).as("start-up fails").isNotNull();
        return FailureReports.report(failure);
    }

    static String report(List<String> properties) {
        return report(properties, Map.of());
    }

    static List<String> with(List<String> properties, String... more) {
        List<String> all = new ArrayList<>(properties);
        all.addAll(List.of(more));
        return all;
    }

    // 1. grpc.retry.enabled

    @Test
    void theMasterSwitchReadsWhatSpringsBinderReads() {
        List<String> svc = fourAttempts("svc", "svc");
        for (String on : List.of("on", "yes", "TRUE", "1")) {
            assertThat(arrivals(with(svc, "grpc.retry.enabled=" + on), "svc")).as("enabled=%s", on).isEqualTo(4);
        }
        for (String off : List.of("off", "no", "false")) {
            assertThat(arrivals(with(svc, "grpc.retry.enabled=" + off), "svc")).as("enabled=%s", off).isEqualTo(1);
        }
    }

    @Test
    void aMasterSwitchValueThatIsNoBooleanStopsStartUp() {
        String report = report(with(fourAttempts("svc", "svc"), "grpc.retry.enabled=maybe"));
        assertThat(report).contains("Failed to bind properties under 'grpc.retry.enabled' to boolean",
                "Property: grpc.retry.enabled", "Value: \"maybe\"", "Invalid boolean value 'maybe'");
        assertThat(report(with(fourAttempts("svc", "svc"), "grpc.retry.enabled=")))
                .contains("Failed to bind properties under 'grpc.retry.enabled' to boolean", "Value: \"\"");
    }

    // 3. GLOBAL is reserved in any case

    /** Creates the channel {@code global} while the application starts, as a client bean would. */
    static final class GlobalClient implements SmartInitializingSingleton, BeanFactoryAware {

        private BeanFactory beanFactory;

        @Override
        public void setBeanFactory(BeanFactory beanFactory) {
            this.beanFactory = beanFactory;
        }

        @Override
        public void afterSingletonsInstantiated() {
            beanFactory.getBean(GrpcChannelFactory.class).createChannel("global");
        }
    }

    @Test
    void aChannelNamedGlobalInAnyCaseStopsStartUpWhileAGlobalEntryExists() {
        for (String entry : List.of("global", "Global", "GLOBAL")) {
            String report = report(fourAttempts("global", entry), Map.of(), new GlobalClient());
            assertThat(report).as(entry).contains("Property: grpc.retry.clients." + entry + "\n",
                    "Reason:   the entry name GLOBAL is reserved, in any case (global, Global, GRPC_RETRY_CLIENTS_GLOBAL_...),"
                            + " for the defaults every channel inherits: it cannot be the entry of the channel global",
                    "grpc.retry.clients." + entry + ": rename the channel global");
        }
        // Boot's own service config for the channel global is reported when the application starts, too.
        String b = "spring.grpc.client.channel.global.service-config.method[0].";
        assertThat(report(with(fourAttempts("global", "global"), b + "name[0].service=grpc.testing.SimpleService",
                b + "wait-for-ready=false")))
                .contains("Property: grpc.retry.clients.global\n", "it cannot be the entry of the channel global");
    }

    @Test
    void anEntryNamedGlobalInAnyCaseHoldsTheDefaultsOfEveryOtherChannel() {
        assertThat(arrivals(fourAttempts("other", "Global"), "other")).isEqualTo(4);
        // The environment's spelling of GLOBAL arrives as the key "global".
        String r = "GRPC_RETRY_CLIENTS_GLOBAL_SERVICECONFIG_METHOD_0_RETRY_";
        assertThat(arrivals(List.of("spring.grpc.client.channel.other.target=" + server.nettyTarget()),
                Map.of(r + "MAXATTEMPTS", "3", r + "INITIALBACKOFF", "1ms", r + "MAXBACKOFF", "2ms",
                        r + "BACKOFFMULTIPLIER", "2", r + "RETRYABLESTATUSCODES", "UNAVAILABLE"), "other")).isEqualTo(3);
    }

    // 2. entries matched to channels as Spring's relaxed binding matches keys

    /** The 4-attempt policy of {@link #fourAttempts} as environment variables of the entry {@code ENTRY}. */
    static Map<String, Object> fourAttemptsInTheEnvironment(String entry) {
        String r = "GRPC_RETRY_CLIENTS_" + entry + "_SERVICECONFIG_METHOD_0_RETRY_";
        return Map.of(r + "MAXATTEMPTS", "4", r + "INITIALBACKOFF", "1ms", r + "MAXBACKOFF", "2ms",
                r + "BACKOFFMULTIPLIER", "2", r + "RETRYABLESTATUSCODES", "UNAVAILABLE");
    }

    @Test
    void environmentVariablesConfigureAChannelWhoseNameHasCapitalsOrDashes() {
        for (String channel : List.of("MySvc", "my-svc", "my_svc")) {
            assertThat(arrivals(List.of("spring.grpc.client.channel." + channel + ".target=" + server.nettyTarget()),
                    fourAttemptsInTheEnvironment("MYSVC"), channel)).as(channel).isEqualTo(4);
        }
    }

    @Test
    void anEntryAppliesToTheChannelWhoseNameItSpellsInAnotherCase() {
        assertThat(arrivals(fourAttempts("MySvc", "mysvc"), "MySvc")).isEqualTo(4);
        assertThat(arrivals(fourAttempts("mysvc", "My-Svc"), "mysvc")).isEqualTo(4);
        // A YAML key and the environment variable that overrides one of its values are one entry.
        assertThat(arrivals(fourAttempts("MySvc", "MySvc"), Map.of("GRPC_RETRY_CLIENTS_MYSVC_MAXATTEMPTSCAP", "3"),
                "MySvc")).isEqualTo(3);
    }

    @Test
    void twoEntriesThatMatchOneChannelStopStartUp() {
        String report = report(with(fourAttempts("MySvc", "[MySvc]"), "grpc.retry.clients.[mysvc].max-attempts-cap=3"));
        assertThat(report).contains("Property: grpc.retry.clients.[mysvc]\n",
                "two entries match the same channel: channel names are matched as Spring Boot matches keys (in lower"
                        + " case, letters and digits only, so MySvc and mysvc are one name)",
                "grpc.retry.clients.[mysvc]: merge them into one entry, grpc.retry.clients.MySvc");
    }

    @Test
    void aChannelWithoutAnEntryWarnsOfAnUnmatchedEntryOneEditAway(CapturedOutput output) {
        List<String> properties = fourAttempts("svc", "svcc");
        properties.set(0, "spring.grpc.client.channel.svc.target=" + server.nettyTarget());
        assertThat(arrivals(properties, "svc")).isEqualTo(1);
        String warning = "Channel svc has no entry of its own under grpc.retry.clients and runs with GLOBAL's"
                + " configuration, while the entry grpc.retry.clients.svcc matches no channel made so far and is one edit"
                + " away from its name: if the entry is meant for this channel, rename it to grpc.retry.clients.svc";
        assertThat(occurrences(output.getOut() + output.getErr(), warning)).isEqualTo(1);
    }

    // 7. values of a feature that is off

    @Test
    void adaptiveHedgingValuesAreCheckedWhileItIsOff() {
        assertThat(report(with(fourAttempts("svc", "svc"), "grpc.retry.clients.svc.adaptive-hedging.max-extra-load=0.9")))
                .contains("Property: grpc.retry.clients.svc.adaptive-hedging.max-extra-load\n    Value:    0.9\n",
                        "Reason:   adaptive-hedging.max-extra-load must be in (0, 0.5]");
    }

    // 6. the service-config file's size

    @Test
    void aServiceConfigFileAboveOneMegabyteIsReportedWithItsPropertyAndOrigin(CapturedOutput output) {
        report(fourAttempts("svc", "svc"), Map.of("GRPC_RETRY_CLIENTS_SVC_SERVICECONFIGFILE", "file:/dev/zero"));
        assertThat(output.getOut() + output.getErr()).contains("APPLICATION FAILED TO START",
                "Property: grpc.retry.clients.svc.service-config-file\n    Value:    file:/dev/zero\n"
                        + "    Origin:   System Environment Property \"GRPC_RETRY_CLIENTS_SVC_SERVICECONFIGFILE\"\n"
                        + "    Reason:   the service config file is larger than 1048576 bytes (1MB), the limit of a"
                        + " service-config file; it was not read further");
    }

    // 5. budget on the native engine

    @Test
    void aBudgetOnTheNativeEngineIsReportedOnceAtStartUp(CapturedOutput output) {
        assertThat(arrivals(with(fourAttempts("svc", "svc"), "grpc.retry.engine=native",
                "grpc.retry.clients.svc.budget.ratio=0.1"), "svc")).isEqualTo(4);
        assertThat(occurrences(output.getOut() + output.getErr(), "budget is ignored: grpc.retry.engine=native"
                + " (grpc-java's own retry) limits retries only by retrythrottling and max-attempts-cap, never by a retry"
                + " budget. Set at: grpc.retry.clients.svc.budget.ratio = 0.1.")).isEqualTo(1);
    }

    // 9. values that make no sense together

    @Test
    void aMaxAttemptsCapAboveOneHundredStopsStartUp() {
        assertThat(report(with(fourAttempts("svc", "svc"), "grpc.retry.clients.svc.max-attempts-cap=100000")))
                .contains("Property: grpc.retry.clients.svc.max-attempts-cap\n    Value:    100000\n",
                        "Reason:   max-attempts-cap must be at most 100: each failing call would send up to this many attempts");
        assertThat(arrivals(with(fourAttempts("svc", "svc"), "grpc.retry.clients.svc.max-attempts-cap=100"), "svc"))
                .isEqualTo(4);
    }

    @Test
    void aBucketThatLetsNoRetryThroughIsReportedAndLetsNoneThrough(CapturedOutput output) {
        String t = "grpc.retry.clients.svc.service-config.retrythrottling.";
        assertThat(arrivals(with(fourAttempts("svc", "svc"), t + "max-tokens=2", t + "token-ratio=0.1"), "svc"))
                .isEqualTo(1);
        assertThat(arrivals(with(fourAttempts("svc", "svc"), t + "max-tokens=3", t + "token-ratio=0.1"), "svc"))
                .isEqualTo(2);
        assertThat(occurrences(output.getOut() + output.getErr(), t + "max-tokens = 2.0 lets no retry through")).isEqualTo(1);
        assertThat(occurrences(output.getOut() + output.getErr(), "lets no retry through")).isEqualTo(1);
    }

    @Test
    void aMaxBackoffBelowTheInitialBackoffAndAPerCallBufferAboveTheChannelsAreWarnedOf(CapturedOutput output) {
        String r = "grpc.retry.clients.svc.service-config.method[0].retry.";
        assertThat(arrivals(with(fourAttempts("svc", "svc"), r + "initial-backoff=20ms",
                "grpc.retry.clients.svc.per-rpc-buffer-limit=32MB"), "svc")).isEqualTo(4);
        String console = output.getOut() + output.getErr();
        assertThat(occurrences(console, r + "max-backoff = 0.002s is below " + r + "initial-backoff = 0.02s: every backoff"
                + " is capped at max-backoff")).isEqualTo(1);
        assertThat(occurrences(console, "grpc.retry.clients.svc.per-rpc-buffer-limit = 33554432B is above"
                + " grpc.retry.clients.svc.retry-buffer-size = 16MB (the default): a call is committed")).isEqualTo(1);
    }

    // 8. reports that mislead

    @Test
    void aDottedChannelNameWithoutBracketsIsPointedAtTheBracketForm() {
        String report = report(with(fourAttempts("svc", "svc"), "grpc.retry.clients.my.service.max-attempts-cap=3"));
        assertThat(report).contains("Property: grpc.retry.clients.my.service.max-attempts-cap\n",
                "a name with a dot is one key only in brackets: did you mean `[my.service]`?",
                "rename it to grpc.retry.clients.[my.service].max-attempts-cap");
    }

    @Test
    void aProblemInsideTheFileNamesThePropertyThatNamesItAndItsOrigin(@TempDir Path dir, CapturedOutput output)
            throws Exception {
        Path file = Files.writeString(dir.resolve("bad.json"), """
                {"methodConfig": [{"name": [{"service": "shop.Inventory"}], "retryPolicy": {"maxAttempts": 1, "initialBackoff": "0.01s",
                  "maxBackoff": "0.1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}
                """);
        report(fourAttempts("svc", "svc"), Map.of("GRPC_RETRY_CLIENTS_SVC_SERVICECONFIGFILE", "file:" + file));
        assertThat(output.getOut() + output.getErr()).contains(
                "Property: file:" + file + " $.methodConfig[0].retryPolicy.maxAttempts\n    Value:    1\n"
                        + "    Origin:   set by grpc.retry.clients.svc.serviceconfigfile = file:" + file
                        + " (System Environment Property \"GRPC_RETRY_CLIENTS_SVC_SERVICECONFIGFILE\")\n");
    }

    @Test
    void malformedJsonIsReportedWithItsLineAndWithoutTheLibrarysAdvice(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("broken.json"), "{\"methodConfig\": [\n  {\"name\": [{}] ,, }\n]}\n");
        String report = report(with(fourAttempts("svc", "svc"), "grpc.retry.clients.svc.service-config-file=file:" + file));
        assertThat(report).contains("Value:    {\"name\": [{}] ,, }\n", "Reason:   malformed JSON at line 2 column")
                .doesNotContain("Strictness", "(not set)");
    }

    @Test
    void aDirectoryOrAPathWithoutPrefixIsReportedForWhatItIs(@TempDir Path dir, CapturedOutput output) throws Exception {
        assertThat(report(with(fourAttempts("svc", "svc"), "grpc.retry.clients.svc.service-config-file=file:" + dir)))
                .contains("Reason:   the service config file is a directory");
        Path file = Files.writeString(dir.resolve("sc.json"), "{}");
        assertThat(report(with(fourAttempts("svc", "svc"), "grpc.retry.clients.svc.service-config-file=" + file)))
                .contains("Reason:   the service config file does not exist on the class path (a value without a"
                                + " classpath: or file: prefix is looked up on the class path)",
                        "grpc.retry.clients.svc.service-config-file: write file:" + file + " for the file on disk");
        // The console shows the value as written, not the class path resource Spring made of it.
        assertThat(output.getOut() + output.getErr()).contains("Property: grpc.retry.clients.svc.service-config-file\n"
                + "    Value:    " + file + "\n");
    }

    @Test
    void valuesAreShownAsWrittenAndAnInfiniteMultiplierIsNamedSo(CapturedOutput output) {
        String t = "grpc.retry.clients.svc.service-config.retrythrottling.";
        assertThat(report(with(fourAttempts("svc", "svc"), t + "max-tokens=10", t + "token-ratio=0.0004")))
                .contains("Property: " + t + "token-ratio\n    Value:    0.0004\n");
        assertThat(report(with(fourAttempts("svc", "svc"),
                "grpc.retry.clients.svc.service-config.method[0].retry.backoff-multiplier=Infinity")))
                .contains("Value:    Infinity\n", "Reason:   backoff-multiplier must be > 0 and finite");
        report(with(fourAttempts("svc", "svc"), "grpc.retry.clients.svc.connect-timeout=1000000d"));
        assertThat(output.getOut() + output.getErr()).contains(
                "Property: grpc.retry.clients.svc.connect-timeout\n    Value:    1000000d\n");
    }

    @Test
    void aDuplicateMethodNameHasTheOriginOfItsName(CapturedOutput output) {
        report(List.of("spring.config.location=classpath:/edges/duplicate-names.yml"), Map.of());
        assertThat(output.getOut() + output.getErr()).contains(
                "Property: grpc.retry.clients.svc.service-config.method[1].name[0]\n",
                "Origin:   class path resource [edges/duplicate-names.yml] - 12:28\n",
                "Reason:   duplicate method name in one channel (also at grpc.retry.clients.svc.service-config.method[0].name[0])");
    }

    // 4. the service-config file's load balancing

    @Test
    void aServiceConfigFileWithLoadBalancingStopsStartUpWithTheKeyAndTheReason(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("lb.json"), """
                {"loadBalancingConfig": [{"round_robin": {}}],
                 "methodConfig": [{"name": [{}], "waitForReady": false}]}
                """);
        String report = report(with(fourAttempts("svc", "svc"), "grpc.retry.clients.svc.service-config-file=file:" + file));
        assertThat(report).contains("Property: file:" + file + " $.loadBalancingConfig\n    Value:    [{\"round_robin\":{}}]\n",
                "Reason:   a service-config file's load balancing is not applied",
                "remove loadBalancingConfig from the file and set the policy on the channel");
    }
}
