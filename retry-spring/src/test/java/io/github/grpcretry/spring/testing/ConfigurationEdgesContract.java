package io.github.grpcretry.spring.testing;

import static io.github.grpcretry.testing.Texts.occurrences;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * Configuration at its edges, the cases both Spring Boot lines share: the master switch read as
 * Spring's binder reads it, channel entries matched to channels as Spring's relaxed binding matches keys, the
 * reserved GLOBAL name, values of a feature that is off, the service-config file's size limit and load
 * balancing, the budget on the native engine, values that make no sense together, and reports that used to
 * mislead. Each case is a real context of the line and one failing call to a scripted server whose arrivals
 * are counted, or the start-up report as Spring Boot's failure analyzers give it (the console's, where the
 * origin or the value as written matters). Each line's {@code ConfigurationEdgesContextTest} supplies the
 * application.
 */
@ExtendWith(OutputCaptureExtension.class)
public abstract class ConfigurationEdgesContract {

    /** The property that makes a channel named {@code channel} whose calls go to the scripted server. */
    protected abstract String channelProperty(String channel);

    /**
     * Starts the application with these properties and environment variables, makes one call on
     * {@code channel} (the server fails every call with UNAVAILABLE), closes it, and answers the arrivals
     * the call made at the server.
     */
    protected abstract int arrivals(List<String> properties, Map<String, Object> environment, String channel);

    /**
     * Starts the application, which must fail, and answers the failure; with {@code globalChannel} a bean of
     * the application makes the channel {@code global} while it starts.
     */
    protected abstract Throwable failure(List<String> properties, Map<String, Object> environment, boolean globalChannel);

    /** What the line's registered FailureAnalyzers make of {@code failure}: description, "---", action. */
    protected abstract String report(Throwable failure);

    /** Properties of a channel {@code channel} aimed at the scripted server, with a 4-attempt policy under {@code entry}. */
    protected List<String> fourAttempts(String channel, String entry) {
        String r = "grpc.retry.clients." + entry + ".service-config.method[0].retry.";
        return new ArrayList<>(List.of(channelProperty(channel), r + "max-attempts=4", r + "initial-backoff=1ms",
                r + "max-backoff=2ms", r + "backoff-multiplier=2", r + "retryable-status-codes=UNAVAILABLE"));
    }

    protected int arrivals(List<String> properties, String channel) {
        return arrivals(properties, Map.of(), channel);
    }

    /** The start-up report of an application that fails to start with these properties and environment variables. */
    protected String report(List<String> properties, Map<String, Object> environment) {
        return report(failure(properties, environment, false));
    }

    protected String report(List<String> properties) {
        return report(properties, Map.of());
    }

    protected static List<String> with(List<String> properties, String... more) {
        List<String> all = new ArrayList<>(properties);
        all.addAll(List.of(more));
        return all;
    }

    // 1. grpc.retry.enabled

    @Test
    public void theMasterSwitchReadsWhatSpringsBinderReads() {
        List<String> svc = fourAttempts("svc", "svc");
        for (String on : List.of("on", "yes", "TRUE", "1")) {
            assertThat(arrivals(with(svc, "grpc.retry.enabled=" + on), "svc")).as("enabled=%s", on).isEqualTo(4);
        }
        for (String off : List.of("off", "no", "false")) {
            assertThat(arrivals(with(svc, "grpc.retry.enabled=" + off), "svc")).as("enabled=%s", off).isEqualTo(1);
        }
    }

    @Test
    public void aMasterSwitchValueThatIsNoBooleanStopsStartUp() {
        String report = report(with(fourAttempts("svc", "svc"), "grpc.retry.enabled=maybe"));
        assertThat(report).contains("Failed to bind properties under 'grpc.retry.enabled' to boolean",
                "Property: grpc.retry.enabled", "Value: \"maybe\"", "Invalid boolean value 'maybe'");
        assertThat(report(with(fourAttempts("svc", "svc"), "grpc.retry.enabled=")))
                .contains("Failed to bind properties under 'grpc.retry.enabled' to boolean", "Value: \"\"");
    }

    // 3. GLOBAL is reserved in any case

    @Test
    public void aChannelNamedGlobalInAnyCaseStopsStartUpWhileAGlobalEntryExists() {
        for (String entry : List.of("global", "Global", "GLOBAL")) {
            String report = report(failure(fourAttempts("global", entry), Map.of(), true));
            assertThat(report).as(entry).contains("Property: grpc.retry.clients." + entry + "\n",
                    "Reason:   the entry name GLOBAL is reserved, in any case (global, Global, GRPC_RETRY_CLIENTS_GLOBAL_...),"
                            + " for the defaults every channel inherits: it cannot be the entry of the channel global",
                    "grpc.retry.clients." + entry + ": rename the channel global");
        }
    }

    @Test
    public void anEntryNamedGlobalInAnyCaseHoldsTheDefaultsOfEveryOtherChannel() {
        assertThat(arrivals(with(fourAttempts("other", "Global")), "other")).isEqualTo(4);
        // The environment's spelling of GLOBAL arrives as the key "global".
        String r = "GRPC_RETRY_CLIENTS_GLOBAL_SERVICECONFIG_METHOD_0_RETRY_";
        assertThat(arrivals(List.of(channelProperty("other")),
                Map.of(r + "MAXATTEMPTS", "3", r + "INITIALBACKOFF", "1ms", r + "MAXBACKOFF", "2ms",
                        r + "BACKOFFMULTIPLIER", "2", r + "RETRYABLESTATUSCODES", "UNAVAILABLE"), "other")).isEqualTo(3);
    }

    // 2. entries matched to channels as Spring's relaxed binding matches keys

    /** The 4-attempt policy of {@link #fourAttempts} as environment variables of the entry {@code ENTRY}. */
    protected static Map<String, Object> fourAttemptsInTheEnvironment(String entry) {
        String r = "GRPC_RETRY_CLIENTS_" + entry + "_SERVICECONFIG_METHOD_0_RETRY_";
        return Map.of(r + "MAXATTEMPTS", "4", r + "INITIALBACKOFF", "1ms", r + "MAXBACKOFF", "2ms",
                r + "BACKOFFMULTIPLIER", "2", r + "RETRYABLESTATUSCODES", "UNAVAILABLE");
    }

    @Test
    public void environmentVariablesConfigureAChannelWhoseNameHasCapitalsOrDashes() {
        for (String channel : List.of("MySvc", "my-svc", "my_svc")) {
            assertThat(arrivals(List.of(channelProperty(channel)),
                    fourAttemptsInTheEnvironment("MYSVC"), channel)).as(channel).isEqualTo(4);
        }
    }

    @Test
    public void anEntryAppliesToTheChannelWhoseNameItSpellsInAnotherCase() {
        assertThat(arrivals(fourAttempts("MySvc", "mysvc"), "MySvc")).isEqualTo(4);
        assertThat(arrivals(fourAttempts("mysvc", "My-Svc"), "mysvc")).isEqualTo(4);
        // A YAML key and the environment variable that overrides one of its values are one entry.
        assertThat(arrivals(fourAttempts("MySvc", "MySvc"), Map.of("GRPC_RETRY_CLIENTS_MYSVC_MAXATTEMPTSCAP", "3"),
                "MySvc")).isEqualTo(3);
    }

    @Test
    public void twoEntriesThatMatchOneChannelStopStartUp() {
        String report = report(with(fourAttempts("MySvc", "[MySvc]"), "grpc.retry.clients.[mysvc].max-attempts-cap=3"));
        assertThat(report).contains("Property: grpc.retry.clients.[mysvc]\n",
                "two entries match the same channel: channel names are matched as Spring Boot matches keys (in lower"
                        + " case, letters and digits only, so MySvc and mysvc are one name)",
                "grpc.retry.clients.[mysvc]: merge them into one entry, grpc.retry.clients.MySvc");
    }

    @Test
    public void aChannelWithoutAnEntryWarnsOfAnUnmatchedEntryOneEditAway(CapturedOutput output) {
        assertThat(arrivals(fourAttempts("svc", "svcc"), "svc")).isEqualTo(1);
        String warning = "Channel svc has no entry of its own under grpc.retry.clients and runs with GLOBAL's"
                + " configuration, while the entry grpc.retry.clients.svcc matches no channel made so far and is one edit"
                + " away from its name: if the entry is meant for this channel, rename it to grpc.retry.clients.svc";
        assertThat(occurrences(output.getOut() + output.getErr(), warning)).isEqualTo(1);
    }

    // 7. values of a feature that is off

    @Test
    public void adaptiveHedgingValuesAreCheckedWhileItIsOff() {
        assertThat(report(with(fourAttempts("svc", "svc"), "grpc.retry.clients.svc.adaptive-hedging.max-extra-load=0.9")))
                .contains("Property: grpc.retry.clients.svc.adaptive-hedging.max-extra-load\n    Value:    0.9\n",
                        "Reason:   adaptive-hedging.max-extra-load must be in (0, 0.5]");
    }

    // 6. the service-config file's size

    @Test
    public void aServiceConfigFileAboveOneMegabyteIsReportedWithItsPropertyAndOrigin(CapturedOutput output) {
        report(fourAttempts("svc", "svc"), Map.of("GRPC_RETRY_CLIENTS_SVC_SERVICECONFIGFILE", "file:/dev/zero"));
        assertThat(output.getOut() + output.getErr()).contains("APPLICATION FAILED TO START","Property: grpc.retry.clients.svc.service-config-file\n    Value:    file:/dev/zero\n"
                        + "    Origin:   System Environment Property \"GRPC_RETRY_CLIENTS_SVC_SERVICECONFIGFILE\"\n"
                        + "    Reason:   the service config file is larger than 1048576 bytes (1MB), the limit of a"
                        + " service-config file; it was not read further");
    }

    // 5. budget on the native engine

    @Test
    public void aBudgetOnTheNativeEngineIsReportedOnceAtStartUp(CapturedOutput output) {
        assertThat(arrivals(with(fourAttempts("svc", "svc"), "grpc.retry.engine=native",
                "grpc.retry.clients.svc.budget.ratio=0.1"), "svc")).isEqualTo(4);
        assertThat(occurrences(output.getOut() + output.getErr(), "budget is ignored: grpc.retry.engine=native"
                + " (grpc-java's own retry) limits retries only by retrythrottling and max-attempts-cap, never by a retry"
                + " budget. Set at: grpc.retry.clients.svc.budget.ratio = 0.1.")).isEqualTo(1);
    }

    // 10. streams.* (a channel-wide group added by the recipe of docs/design.md)

    @Test
    public void streamsValuesOutOfRangeStopStartUpWithTheirPathsAndOrigins(CapturedOutput output) {
        report(fourAttempts("svc", "svc"), Map.of("GRPC_RETRY_CLIENTS_SVC_STREAMS_IDLETIMEOUT", "-1s",
                "GRPC_RETRY_CLIENTS_SVC_STREAMS_MAXRESUMES", "-1"));
        assertThat(output.getOut() + output.getErr()).contains("APPLICATION FAILED TO START",
                "Property: grpc.retry.clients.svc.streams.idle-timeout\n    Value:    -1s\n"
                        + "    Origin:   System Environment Property \"GRPC_RETRY_CLIENTS_SVC_STREAMS_IDLETIMEOUT\"\n"
                        + "    Reason:   streams.idle-timeout must be > 0\n",
                "Property: grpc.retry.clients.svc.streams.max-resumes\n    Value:    -1\n"
                        + "    Origin:   System Environment Property \"GRPC_RETRY_CLIENTS_SVC_STREAMS_MAXRESUMES\"\n"
                        + "    Reason:   streams.max-resumes must be >= 0\n");
    }

    @Test
    public void streamsOnTheNativeEngineAreReportedOnceAtStartUp(CapturedOutput output) {
        assertThat(arrivals(with(fourAttempts("svc", "svc"), "grpc.retry.engine=native",
                "grpc.retry.clients.GLOBAL.streams.max-resumes=1"), "svc")).isEqualTo(4);
        assertThat(occurrences(output.getOut() + output.getErr(), "streams is ignored: grpc.retry.engine=native"
                + " (grpc-java's own retry) neither cancels an idle streaming attempt nor resumes a stream after its"
                + " commit. Set at: grpc.retry.clients.GLOBAL.streams.max-resumes = 1.")).isEqualTo(1);
    }

    // 9. values that make no sense together

    @Test
    public void aMaxAttemptsCapAboveOneHundredStopsStartUp() {
        assertThat(report(with(fourAttempts("svc", "svc"), "grpc.retry.clients.svc.max-attempts-cap=100000")))
                .contains("Property: grpc.retry.clients.svc.max-attempts-cap\n    Value:    100000\n",
                        "Reason:   max-attempts-cap must be at most 100: each failing call would send up to this many attempts");
        assertThat(arrivals(with(fourAttempts("svc", "svc"), "grpc.retry.clients.svc.max-attempts-cap=100"), "svc"))
                .isEqualTo(4);
    }

    @Test
    public void aBucketThatLetsNoRetryThroughIsReportedAndLetsNoneThrough(CapturedOutput output) {
        String t = "grpc.retry.clients.svc.service-config.retrythrottling.";
        assertThat(arrivals(with(fourAttempts("svc", "svc"), t + "max-tokens=2", t + "token-ratio=0.1"), "svc"))
                .isEqualTo(1);
        assertThat(arrivals(with(fourAttempts("svc", "svc"), t + "max-tokens=3", t + "token-ratio=0.1"), "svc"))
                .isEqualTo(2);
        assertThat(occurrences(output.getOut() + output.getErr(), t + "max-tokens = 2.0 lets no retry through")).isEqualTo(1);
        assertThat(occurrences(output.getOut() + output.getErr(), "lets no retry through")).isEqualTo(1);
    }

    @Test
    public void aMaxBackoffBelowTheInitialBackoffAndAPerCallBufferAboveTheChannelsAreWarnedOf(CapturedOutput output) {
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
    public void aDottedChannelNameWithoutBracketsIsPointedAtTheBracketForm() {
        String report = report(with(fourAttempts("svc", "svc"), "grpc.retry.clients.my.service.max-attempts-cap=3"));
        assertThat(report).contains("Property: grpc.retry.clients.my.service.max-attempts-cap\n",
                "a name with a dot is one key only in brackets: did you mean `[my.service]`?",
                "rename it to grpc.retry.clients.[my.service].max-attempts-cap");
    }

    @Test
    public void aProblemInsideTheFileNamesThePropertyThatNamesItAndItsOrigin(@TempDir Path dir, CapturedOutput output)
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
    public void malformedJsonIsReportedWithItsLineAndWithoutTheLibrarysAdvice(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("broken.json"), "{\"methodConfig\": [\n  {\"name\": [{}] ,, }\n]}\n");
        String report = report(with(fourAttempts("svc", "svc"), "grpc.retry.clients.svc.service-config-file=file:" + file));
        assertThat(report).contains("Value:    {\"name\": [{}] ,, }\n", "Reason:   malformed JSON at line 2 column")
                .doesNotContain("Strictness", "(not set)");
    }

    @Test
    public void aDirectoryOrAPathWithoutPrefixIsReportedForWhatItIs(@TempDir Path dir, CapturedOutput output) throws Exception {
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
    public void valuesAreShownAsWrittenAndAnInfiniteMultiplierIsNamedSo(CapturedOutput output) {
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
    public void oneFieldOfAListEntryOverriddenInTheEnvironmentIsReportedAsTheListReplaced(CapturedOutput output) {
        String entry = "grpc.retry.clients.svc.service-config.method[0]";
        String variable = "GRPC_RETRY_CLIENTS_SVC_SERVICECONFIG_METHOD_0_RETRY_MAXATTEMPTS";
        failure(fourAttempts("svc", "svc"), Map.of(variable, "3"), false);
        String console = output.getOut() + output.getErr();
        assertThat(console).contains("Property: " + entry + ".retry.initial-backoff\n    Value:    (not set)\n"
                + "    Replaced: the list entry " + entry + " comes whole from the property source test-systemEnvironment"
                + " (grpc.retry.clients.svc.serviceconfig.method[0].retry.maxattempts from System Environment Property \""
                + variable + "\"), which replaced the list grpc.retry.clients.svc.service-config.method: Spring Boot"
                + " takes a list from the one source of highest priority that has any of its entries; this value, set in",
                entry + ".retry.initial-backoff: repeat every value of the entry " + entry + " in the property source"
                        + " test-systemEnvironment, not only the one it overrides, or make the override in the source that"
                        + " holds the rest of the list");
        assertThat(occurrences(console, "    Replaced: the list entry " + entry)).isEqualTo(4);
        assertThat(console).doesNotContain(entry + ".retry.initial-backoff: set it, e.g. 0.1s");

        // a value missing from the one source that has the list is reported as not set, without a replacement
        int before = console.length();
        List<String> missing = new ArrayList<>(fourAttempts("svc", "svc"));
        missing.removeIf(p -> p.contains("initial-backoff"));
        failure(missing, Map.of(), false);
        String alone = (output.getOut() + output.getErr()).substring(before);
        assertThat(alone).contains("Property: " + entry + ".retry.initial-backoff\n    Value:    (not set)\n    Reason:",
                entry + ".retry.initial-backoff: set it, e.g. 0.1s").doesNotContain("Replaced:");
    }

    @Test
    public void aDuplicateMethodNameHasTheOriginOfItsName(CapturedOutput output) {
        report(List.of("spring.config.location=classpath:/edges/duplicate-names.yml"), Map.of());
        // the resource's origin names the jar it came from when the test jar is used packaged (a reactor build)
        assertThat(output.getOut() + output.getErr()).contains(
                "Property: grpc.retry.clients.svc.service-config.method[1].name[0]\n",
                "Reason:   duplicate method name in one channel (also at grpc.retry.clients.svc.service-config.method[0].name[0])")
                .containsPattern("Origin:   class path resource \\[edges/duplicate-names\\.yml\\]( from [^ ]+\\.jar)? - 12:28\n");
    }

    // 4. the service-config file's load balancing

    @Test
    public void aServiceConfigFileWithLoadBalancingStopsStartUpWithTheKeyAndTheReason(@TempDir Path dir) throws Exception {
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
