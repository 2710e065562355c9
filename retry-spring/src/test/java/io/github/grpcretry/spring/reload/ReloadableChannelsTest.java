package io.github.grpcretry.spring.reload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.spring.channel.ChannelSetup;
import io.github.grpcretry.spring.channel.StreamResumptions;
import io.github.grpcretry.spring.reload.ReloadableChannels.Outcome;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ReloadableChannels} with the interceptor engine on a real in-process channel: what a reload
 * applies, holds for a restart or rejects, what calls in flight keep, and which limiter state survives.
 */
class ReloadableChannelsTest {

    static final String CHANNEL = "inv";
    static final String KEY = "grpc.retry.clients.inv.service-config.method[0].retry.max-attempts";

    ScriptedServer server;
    ManagedChannel channel;
    RetryLimiterRegistry limiters = new RetryLimiterRegistry();
    ReloadableChannels channels;

    @BeforeEach
    void start() throws Exception {
        server = ScriptedServer.start("reloadable-" + System.nanoTime());
        server.script(a -> ScriptedServer.Action.failOnHalfClose(Status.Code.UNAVAILABLE));
    }

    @AfterEach
    void stop() {
        if (channel != null) {
            channel.shutdownNow();
        }
        server.close();
    }

    static ChannelRetryConfig config(int maxAttempts, int cap, RetryThrottlingPolicy throttling, RetryBudgetPolicy budget) {
        RetryPolicy retry = new RetryPolicy(maxAttempts, Duration.ofMillis(1), Duration.ofMillis(2), 1,
                EnumSet.of(Status.Code.UNAVAILABLE), null);
        ServiceConfig sc = new ServiceConfig(List.of(new MethodConfig(List.of(MethodName.DEFAULT), null, null, null, null,
                retry, null)), throttling);
        return ChannelRetryConfig.of(CHANNEL, sc.capped(cap)).withMaxAttemptsCap(cap).withBudget(budget);
    }

    static ChannelRetryConfig config(int maxAttempts) {
        return config(maxAttempts, 5, new RetryThrottlingPolicy(100, 0.1), new RetryBudgetPolicy(0.5, 10, Duration.ofSeconds(10)));
    }

    static ChannelRetryConfigs only(ChannelRetryConfig config) {
        return new ChannelRetryConfigs() {
            @Override
            public ChannelRetryConfig forChannel(String channel) {
                return channel.equals(config.channel()) ? config : ChannelRetryConfig.of(channel, ServiceConfig.EMPTY);
            }

            @Override
            public Set<String> configuredChannels() {
                return Set.of(config.channel());
            }
        };
    }

    /** Builds the channel as a Boot line does: marked built, its one interceptor running the engine. */
    void build(ChannelRetryConfig initial) {
        channels = new ReloadableChannels(only(initial), ChannelSetup.Engine.INTERCEPTOR, limiters);
        channels.built(initial.channel());
        channel = InProcessChannelBuilder.forName(server.inProcessName()).directExecutor()
                .intercept(channels.interceptor(initial.channel(), (config, previous) -> List.of(ChannelSetup.engineInterceptor(config,
                        ChannelSetup.Engine.INTERCEPTOR, limiters, RetryEventListener.NOOP, null, List.of(), null, null, previous, null,
                        StreamResumptions.NONE))))
                .build();
    }

    int attemptsOfAFailingCall() {
        int before = server.arrivalCount();
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, () -> SimpleServiceGrpc
                .newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(SimpleRequest.getDefaultInstance()));
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        return server.arrivalCount() - before;
    }

    @Test
    void newCallsRunTheNewPolicyCallsInFlightKeepTheirs() throws Exception {
        build(config(2));
        // a client-streaming call whose first attempt is at the server, not yet half-closed
        CompletableFuture<Status> inFlight = new CompletableFuture<>();
        StreamObserver<SimpleRequest> requests = SimpleServiceGrpc.newStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                .clientStreamingRpc(new StreamObserver<>() {
                    @Override
                    public void onNext(SimpleResponse value) {
                    }

                    @Override
                    public void onError(Throwable t) {
                        inFlight.complete(Status.fromThrowable(t));
                    }

                    @Override
                    public void onCompleted() {
                        inFlight.complete(Status.OK);
                    }
                });
        requests.onNext(SimpleRequest.getDefaultInstance());
        await().atMost(Duration.ofSeconds(10)).until(() -> server.arrivalCount() == 1);

        ReloadableChannels.Result result = channels.reload(() -> only(config(4)), List.of(KEY));
        assertThat(result.channels().get(CHANNEL).outcome()).isEqualTo(Outcome.APPLIED);
        assertThat(channels.lastReload(CHANNEL).message()).contains(KEY);

        requests.onCompleted(); // the in-flight call fails its attempts now: with its own policy, 2
        assertThat(inFlight.get(10, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).isEqualTo(2);
        assertThat(attemptsOfAFailingCall()).isEqualTo(4);
        assertThat(channels.forChannel(CHANNEL)).isEqualTo(config(4));
    }

    @Test
    void theThrottleAndBudgetSurviveUnlessTheirOwnParametersChange() {
        build(config(2));
        attemptsOfAFailingCall(); // makes the engine (and its limiters) and takes tokens
        RetryThrottle throttle = limiters.throttle(CHANNEL).orElseThrow();
        double tokens = throttle.tokens();
        assertThat(tokens).isLessThan(100);
        var budget = limiters.budget(CHANNEL).orElseThrow();

        channels.reload(() -> only(config(3)), List.of(KEY));
        assertThat(limiters.throttle(CHANNEL)).containsSame(throttle);
        assertThat(limiters.budget(CHANNEL)).containsSame(budget);
        assertThat(throttle.tokens()).isEqualTo(tokens);

        RetryBudgetPolicy otherBudget = new RetryBudgetPolicy(0.2, 10, Duration.ofSeconds(10));
        channels.reload(() -> only(config(3, 5, new RetryThrottlingPolicy(20, 0.1), otherBudget)),
                List.of("grpc.retry.clients.inv.service-config.retrythrottling.max-tokens", "grpc.retry.clients.inv.budget.ratio"));
        assertThat(limiters.throttle(CHANNEL)).isPresent().get().isNotSameAs(throttle);
        assertThat(limiters.throttle(CHANNEL).orElseThrow().tokens()).isEqualTo(20);
        assertThat(limiters.budget(CHANNEL)).isPresent().get().isNotSameAs(budget);
        assertThat(attemptsOfAFailingCall()).isEqualTo(3);
    }

    @Test
    void whatABuiltChannelCannotChangeIsHeldForARestart() {
        build(config(2));
        ReloadableChannels.Result result = channels.reload(() -> only(config(4, 3, new RetryThrottlingPolicy(100, 0.1),
                new RetryBudgetPolicy(0.5, 10, Duration.ofSeconds(10)))), List.of(KEY, "grpc.retry.clients.inv.max-attempts-cap"));
        assertThat(result.channels().get(CHANNEL).outcome()).isEqualTo(Outcome.RESTART_REQUIRED);
        // the cap needs the restart; the attempts change, which the channel could take, is held with it
        assertThat(channels.lastReload(CHANNEL).message()).isEqualTo("restart required, the channel keeps its running"
                + " configuration: grpc.retry.clients.inv.max-attempts-cap; held with it: " + KEY);
        // never half-applied: the new max-attempts is not taken either
        assertThat(attemptsOfAFailingCall()).isEqualTo(2);
        assertThat(channels.forChannel(CHANNEL)).isEqualTo(config(2));

        ReloadableChannels.Result deadline = channels.reload(() -> only(config(2)), List.of("grpc.retry.deadline.reserve"));
        assertThat(deadline.channels().get(CHANNEL).outcome()).isEqualTo(Outcome.RESTART_REQUIRED);
        assertThat(deadline.channels().get(CHANNEL).message()).contains("grpc.retry.deadline.reserve");
    }

    @Test
    void anInvalidConfigurationIsRejectedWholeAndTheOldOneStays() {
        build(config(2));
        ConfigProblem problem = new ConfigProblem(KEY, "1", "max-attempts must be >= 2", "set 2 or more");
        ReloadableChannels.Result result = channels.reload(() -> {
            throw new InvalidRetryConfigurationException(List.of(problem));
        }, List.of(KEY));
        assertThat(result.problems()).containsExactly(problem);
        Map<String, Object> last = channels.lastReload(CHANNEL).toMap();
        assertThat(last).containsEntry("outcome", "rejected").containsKey("time");
        assertThat((String) last.get("message")).contains(KEY).contains("max-attempts must be >= 2");
        assertThat(attemptsOfAFailingCall()).isEqualTo(2);
    }

    @Test
    void aConfigurationBackToWhatRunsIsUnchangedAndClearsARejection() {
        build(config(2));
        channels.reload(() -> {
            throw new InvalidRetryConfigurationException(List.of(new ConfigProblem(KEY, "1", "max-attempts must be >= 2", "")));
        }, List.of(KEY));
        assertThat(channels.lastReload(CHANNEL).outcome()).isEqualTo(Outcome.REJECTED);

        ReloadableChannels.Result result = channels.reload(() -> only(config(2)), List.of(KEY));
        assertThat(result.channels().get(CHANNEL).outcome()).isEqualTo(Outcome.UNCHANGED);
        assertThat(channels.lastReload(CHANNEL).message()).isEqualTo("unchanged, the channel already runs this configuration ("
                + KEY + ")");
        // a key of another channel does not concern this one
        assertThat(channels.reload(() -> only(config(2)), List.of("grpc.retry.clients.other.max-attempts-cap")).channels())
                .doesNotContainKey(CHANNEL);
        assertThat(attemptsOfAFailingCall()).isEqualTo(2);
    }

    @Test
    void aRefreshThatFailedBeforeItsConfigurationWasReadIsFailedOnEveryChannel() {
        build(config(2));
        ReloadableChannels.Result result = channels.failed(new IllegalStateException("bad file",
                new IllegalArgumentException("line 3:\n  unclosed [")));
        assertThat(result.channels()).containsOnlyKeys(CHANNEL);
        assertThat(channels.lastReload(CHANNEL).outcome()).isEqualTo(Outcome.FAILED);
        assertThat(channels.lastReload(CHANNEL).message()).isEqualTo("failed, the configuration could not be read and the"
                + " running one stays: IllegalStateException: bad file: line 3: unclosed [");
        assertThat(attemptsOfAFailingCall()).isEqualTo(2);
    }

    @Test
    void withTheValuesAnOutcomeNamesTheKeysThatDifferFromWhatRuns() {
        String timeout = "grpc.retry.clients.inv.service-config.method[0].timeout";
        build(config(2));
        channels.valuesAtStart(Map.of(KEY, "2"));
        ChannelRetryConfig withTimeout = withTimeout(config(3));
        ReloadableChannels.Result held = channels.reload(() -> only(withTimeout), List.of(KEY), Map.of(KEY, "3", timeout, "1s"));
        assertThat(held.channels().get(CHANNEL).outcome()).isEqualTo(Outcome.RESTART_REQUIRED);
        assertThat(held.channels().get(CHANNEL).message()).contains(timeout).contains("held with it: " + KEY);

        // the timeout removed: the attempts change is what is applied, though only the timeout key changed now
        ReloadableChannels.Result applied = channels.reload(() -> only(config(3)), List.of(timeout), Map.of(KEY, "3"));
        assertThat(applied.channels().get(CHANNEL).message()).isEqualTo("applied (" + KEY + ")");
        assertThat(attemptsOfAFailingCall()).isEqualTo(3);
    }

    @Test
    void aHeldChangeIsNotReportedAgainByARefreshThatDoesNotConcernTheChannel() {
        String timeout = "grpc.retry.clients.inv.service-config.method[0].timeout";
        build(config(2));
        channels.valuesAtStart(Map.of(KEY, "2"));
        Map<String, String> held = Map.of(KEY, "2", timeout, "1s");
        assertThat(channels.reload(() -> only(withTimeout(config(2))), List.of(timeout), held).channels().get(CHANNEL)
                .outcome()).isEqualTo(Outcome.RESTART_REQUIRED);
        String other = "grpc.retry.clients.other.max-attempts-cap";
        Map<String, String> more = new java.util.HashMap<>(held);
        more.put(other, "4");
        assertThat(channels.reload(() -> only(withTimeout(config(2))), List.of(other), more).channels())
                .doesNotContainKey(CHANNEL);
        assertThat(channels.lastReload(CHANNEL).outcome()).isEqualTo(Outcome.RESTART_REQUIRED);
    }

    /** {@code c} as the configuration of the channel {@code name}. */
    static ChannelRetryConfig named(String name, ChannelRetryConfig c) {
        return ChannelRetryConfig.of(name, c.serviceConfig()).withMaxAttemptsCap(c.maxAttemptsCap()).withBuffers(c.perRpcBufferLimit(), c.retryBufferSize()).withBudget(c.budget());
    }

    @Test
    void changedKeysReachTheChannelTheirEntryMatchesAtStartUpWhateverTheNamesCase() {
        build(named("MyInv", config(2)));
        String lower = "grpc.retry.clients.myinv.service-config.method[0].retry.max-attempts";
        ReloadableChannels.Result applied = channels.reload(() -> only(named("MyInv", config(3))), List.of(lower));
        assertThat(applied.channels()).containsOnlyKeys("MyInv");
        assertThat(applied.channels().get("MyInv").message()).isEqualTo("applied (" + lower + ")");
        assertThat(attemptsOfAFailingCall()).isEqualTo(3);

        // a rejected refresh of the dashed spelling is recorded on the channel, not on a channel of the key's name
        String dashed = "grpc.retry.clients.my-inv.service-config.method[0].retry.max-attempts";
        ReloadableChannels.Result rejected = channels.reload(() -> {
            throw new InvalidRetryConfigurationException(List.of(new ConfigProblem(dashed, "1",
                    "max-attempts must be >= 2", "set 2 or more")));
        }, List.of(dashed));
        assertThat(rejected.channels()).containsOnlyKeys("MyInv");
        assertThat(channels.lastReload("MyInv").outcome()).isEqualTo(Outcome.REJECTED);

        // an entry of another name is still another channel's; a GLOBAL entry in any case concerns every channel
        assertThat(channels.reload(() -> only(named("MyInv", config(3))),
                List.of("grpc.retry.clients.myinvv.max-attempts-cap")).channels()).doesNotContainKey("MyInv");
        ReloadableChannels.Result global = channels.reload(() -> only(named("MyInv", config(3))),
                List.of("grpc.retry.clients.Global.max-attempts-cap"));
        assertThat(global.channels().get("MyInv").outcome()).isEqualTo(Outcome.UNCHANGED);
        assertThat(global.channels().get("MyInv").message())
                .isEqualTo("unchanged, the channel already runs this configuration (grpc.retry.clients.Global.max-attempts-cap)");
        assertThat(attemptsOfAFailingCall()).isEqualTo(3);
    }

    static ChannelRetryConfig withTimeout(ChannelRetryConfig c) {
        MethodConfig m = c.serviceConfig().methodConfigs().get(0);
        ServiceConfig sc = new ServiceConfig(List.of(new MethodConfig(m.names(), null, Duration.ofSeconds(1), null, null,
                m.retryPolicy(), null)), c.serviceConfig().retryThrottling());
        return ChannelRetryConfig.of(CHANNEL, sc).withMaxAttemptsCap(c.maxAttemptsCap()).withBuffers(c.perRpcBufferLimit(), c.retryBufferSize()).withBudget(c.budget());
    }

    @Test
    void aChannelNotBuiltYetTakesEveryChange() {
        channels = new ReloadableChannels(only(config(2)), ChannelSetup.Engine.INTERCEPTOR, limiters);
        ReloadableChannels.Result result = channels.reload(() -> only(config(4, 3, null, null)),
                List.of("grpc.retry.clients.inv.max-attempts-cap"));
        assertThat(result.channels().get(CHANNEL).outcome()).isEqualTo(Outcome.APPLIED);
        assertThat(channels.forChannel(CHANNEL).maxAttemptsCap()).isEqualTo(3);
    }

    /** The channel with a stack factory that counts its stacks and records the configuration of each. */
    List<ChannelRetryConfig> buildCounting(ChannelRetryConfig initial) {
        List<ChannelRetryConfig> made = new CopyOnWriteArrayList<>();
        channels = new ReloadableChannels(only(initial), ChannelSetup.Engine.INTERCEPTOR, limiters);
        channels.built(CHANNEL);
        channel = InProcessChannelBuilder.forName(server.inProcessName()).directExecutor()
                .intercept(channels.interceptor(CHANNEL, (config, previous) -> {
                    made.add(config);
                    return List.of(ChannelSetup.engineInterceptor(config, ChannelSetup.Engine.INTERCEPTOR, limiters,
                            RetryEventListener.NOOP, null, List.of(), null, null, previous, null, StreamResumptions.NONE));
                }))
                .build();
        return made;
    }

    @Test
    void theEngineIsMadeOnTheFirstCallItsLimitersAtBuild() {
        List<ChannelRetryConfig> made = buildCounting(config(2));
        assertThat(made).isEmpty();
        // the gauges and health read the limiters from start-up on, before any call
        assertThat(limiters.throttle(CHANNEL)).isPresent().get().extracting(RetryThrottle::tokens).isEqualTo(100.0);
        assertThat(limiters.budget(CHANNEL)).isPresent();
        RetryThrottle throttle = limiters.throttle(CHANNEL).orElseThrow();

        assertThat(attemptsOfAFailingCall()).isEqualTo(2);
        assertThat(attemptsOfAFailingCall()).isEqualTo(2);
        assertThat(made).containsExactly(config(2));
        assertThat(limiters.throttle(CHANNEL)).containsSame(throttle); // the engine took the same throttle
        assertThat(throttle.tokens()).isLessThan(100);
    }

    @Test
    void racingFirstCallsMakeTheEngineOnce() throws Exception {
        List<ChannelRetryConfig> made = buildCounting(config(2));
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Status.Code>> calls = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                calls.add(pool.submit(() -> {
                    go.await();
                    return catchThrowableOfType(StatusRuntimeException.class, () -> SimpleServiceGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(SimpleRequest.getDefaultInstance()))
                            .getStatus().getCode();
                }));
            }
            go.countDown();
            for (Future<Status.Code> call : calls) {
                assertThat(call.get(30, TimeUnit.SECONDS)).isEqualTo(Status.Code.UNAVAILABLE);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(made).hasSize(1);
        assertThat(server.arrivalCount()).isEqualTo(2 * threads); // every call ran the engine: 2 attempts each
    }

    @Test
    void aReloadBeforeTheFirstCallIsWhatTheFirstCallRuns() {
        List<ChannelRetryConfig> made = buildCounting(config(2));
        ReloadableChannels.Result result = channels.reload(() -> only(config(3)), List.of(KEY));
        assertThat(result.channels().get(CHANNEL).outcome()).isEqualTo(Outcome.APPLIED);
        assertThat(made).isEmpty();

        assertThat(attemptsOfAFailingCall()).isEqualTo(3);
        assertThat(made).containsExactly(config(3));
    }

    @Test
    void keysAreAttributedToTheirChannel() {
        assertThat(ReloadableChannels.channelOf("grpc.retry.clients.inv.budget.ratio")).isEqualTo("inv");
        assertThat(ReloadableChannels.channelOf("grpc.retry.clients.[in-process:inv].max-attempts-cap"))
                .isEqualTo("in-process:inv");
        assertThat(ReloadableChannels.channelOf("grpc.retry.clients.inv.service-config.method[0].timeout")).isEqualTo("inv");
        assertThat(ReloadableChannels.channelOf("spring.grpc.client.channel.inv.service-config.method[0].retry.max-attempts"))
                .isEqualTo("inv");
        assertThat(ReloadableChannels.channelOf("spring.grpc.client.channel.inv.address")).isNull();
        assertThat(ReloadableChannels.concerns("spring.grpc.client.channel.inv.address")).isFalse();
        assertThat(ReloadableChannels.concerns("grpc.retry.engine")).isTrue();
        assertThat(ReloadableChannels.concerns("server.port")).isFalse();
    }
}
