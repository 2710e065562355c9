package io.github.grpcretry.internal.backends;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ChannelLogger;
import io.grpc.ClientStreamTracer;
import io.grpc.ConnectivityState;
import io.grpc.ConnectivityStateInfo;
import io.grpc.EquivalentAddressGroup;
import io.grpc.LoadBalancer;
import io.grpc.LoadBalancer.PickResult;
import io.grpc.LoadBalancer.Subchannel;
import io.grpc.LoadBalancer.SubchannelPicker;
import io.grpc.LoadBalancerRegistry;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.NameResolver;
import io.grpc.Status;
import io.grpc.SynchronizationContext;
import io.grpc.internal.PickSubchannelArgsImpl;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * The balancer that avoids tried backends, with fake subchannels and a fake helper (no transport): the picker
 * alone against a scripted child picker, then the whole policy around grpc-java's own {@code round_robin}.
 */
class TriedBackendsLoadBalancerTest {

    private static final MethodDescriptor<String, String> METHOD = MethodDescriptor.<String, String>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName("test/Echo")
            .setRequestMarshaller(new Text()).setResponseMarshaller(new Text()).build();

    // ---- the picker against a scripted child ----

    @Test
    void aFirstAttemptTakesTheChildsPickAsItIsAndRecordsIt() {
        FakeSubchannel a = new FakeSubchannel("a");
        Script child = new Script(PickResult.withSubchannel(a));
        Attempt first = new Attempt(null, 5);

        PickResult result = new TriedBackendsLoadBalancer.AvoidingPicker(child).pickSubchannel(args(first));

        assertThat(result).isSameAs(child.given.get(0));
        assertThat(child.asked).isEqualTo(1);
        assertThat(first.picked()).isSameAs(a);
        assertThat(first.reused()).isNull();
    }

    @Test
    void aRetryWhoseFirstPickWasTriedIsGivenTheChildsNextUntriedPickUnchanged() {
        FakeSubchannel a = new FakeSubchannel("a");
        FakeSubchannel b = new FakeSubchannel("b");
        ClientStreamTracer.Factory childTracer = new ClientStreamTracer.Factory() {
        };
        Attempt first = attemptOn(a);
        Attempt retry = new Attempt(first, 5);
        Script child = new Script(PickResult.withSubchannel(a), PickResult.withSubchannel(b, childTracer, "b.example"));

        PickResult result = new TriedBackendsLoadBalancer.AvoidingPicker(child).pickSubchannel(args(retry));

        assertThat(result).isSameAs(child.given.get(1)); // its tracer factory and authority untouched
        assertThat(result.getStreamTracerFactory()).isSameAs(childTracer);
        assertThat(result.getAuthorityOverride()).isEqualTo("b.example");
        assertThat(retry.picked()).isSameAs(b);
        assertThat(retry.reused()).isNull();
    }

    @Test
    void theChildIsAskedAtMostBackendPicksTimesThenTheAttemptGoesToATriedOne() {
        FakeSubchannel a = new FakeSubchannel("a");
        FakeSubchannel b = new FakeSubchannel("b");
        FakeSubchannel c = new FakeSubchannel("c");
        FakeSubchannel d = new FakeSubchannel("d");
        Attempt first = attemptOn(a);
        Attempt second = new Attempt(first, 3);
        second.picked(b, TriedBackends.notReused());
        Attempt third = new Attempt(second, 3);
        third.picked(c, TriedBackends.notReused());
        Attempt fourth = new Attempt(third, 3);
        Script child = new Script(PickResult.withSubchannel(a), PickResult.withSubchannel(b),
                PickResult.withSubchannel(c), PickResult.withSubchannel(d));

        PickResult result = new TriedBackendsLoadBalancer.AvoidingPicker(child).pickSubchannel(args(fourth));

        assertThat(child.asked).isEqualTo(3); // d, untried, was never asked for
        assertThat(result).isSameAs(child.given.get(2));
        assertThat(fourth.picked()).isSameAs(c);
        assertThat(fourth.reused()).isEqualTo(TriedBackends.PICKS_EXHAUSTED);
    }

    @Test
    void aChildThatReturnsTheSameSubchannelAgainHasNoOtherReady() {
        FakeSubchannel a = new FakeSubchannel("a");
        Attempt retry = new Attempt(attemptOn(a), 5);
        Script child = new Script(PickResult.withSubchannel(a), PickResult.withSubchannel(a));

        PickResult result = new TriedBackendsLoadBalancer.AvoidingPicker(child).pickSubchannel(args(retry));

        assertThat(child.asked).as("pick_first, a consistent hash: every pick the same").isEqualTo(5);
        assertThat(result).isSameAs(child.given.get(1));
        assertThat(retry.picked()).isSameAs(a);
        assertThat(retry.reused()).isEqualTo(TriedBackends.NO_OTHER_READY);
    }

    @Test
    void theSameTriedSubchannelTwiceDoesNotEndTheSearchForAnUntriedOne() {
        // under concurrent calls round_robin's index moves between two picks of one call: a, a, then b
        FakeSubchannel a = new FakeSubchannel("a");
        FakeSubchannel b = new FakeSubchannel("b");
        Attempt retry = new Attempt(attemptOn(a), 5);
        Script child = new Script(PickResult.withSubchannel(a), PickResult.withSubchannel(a),
                PickResult.withSubchannel(b));

        PickResult result = new TriedBackendsLoadBalancer.AvoidingPicker(child).pickSubchannel(args(retry));

        assertThat(child.asked).isEqualTo(3);
        assertThat(result).isSameAs(child.given.get(2));
        assertThat(retry.picked()).isSameAs(b);
        assertThat(retry.reused()).isNull();
    }

    @Test
    void dropsErrorsAndNoResultPassThroughAsTheChildGaveThem() {
        FakeSubchannel a = new FakeSubchannel("a");
        for (PickResult given : List.of(PickResult.withDrop(Status.UNAVAILABLE.withDescription("dropped")),
                PickResult.withError(Status.UNAVAILABLE.withDescription("no backend")), PickResult.withNoResult())) {
            Attempt retry = new Attempt(attemptOn(a), 5);
            Script child = new Script(given);

            PickResult result = new TriedBackendsLoadBalancer.AvoidingPicker(child).pickSubchannel(args(retry));

            assertThat(result).isSameAs(given);
            assertThat(child.asked).isEqualTo(1);
            assertThat(retry.picked()).isNull();
        }
    }

    @Test
    void aLaterPickWithoutSubchannelKeepsTheTriedOneRatherThanMakeTheCallWait() {
        FakeSubchannel a = new FakeSubchannel("a");
        Attempt retry = new Attempt(attemptOn(a), 5);
        Script child = new Script(PickResult.withSubchannel(a), PickResult.withNoResult());

        PickResult result = new TriedBackendsLoadBalancer.AvoidingPicker(child).pickSubchannel(args(retry));

        assertThat(result).isSameAs(child.given.get(0));
        assertThat(result.getSubchannel()).isSameAs(a);
        assertThat(retry.reused()).isEqualTo(TriedBackends.NO_OTHER_READY);
    }

    @Test
    void aRedonePickReplacesTheAttemptsEarlierOne() {
        FakeSubchannel a = new FakeSubchannel("a");
        FakeSubchannel b = new FakeSubchannel("b");
        Attempt first = new Attempt(null, 5);
        new TriedBackendsLoadBalancer.AvoidingPicker(new Script(PickResult.withSubchannel(a))).pickSubchannel(args(first));
        new TriedBackendsLoadBalancer.AvoidingPicker(new Script(PickResult.withSubchannel(b))).pickSubchannel(args(first));
        Attempt retry = new Attempt(first, 5);
        Script child = new Script(PickResult.withSubchannel(b), PickResult.withSubchannel(a));

        PickResult result = new TriedBackendsLoadBalancer.AvoidingPicker(child).pickSubchannel(args(retry));

        assertThat(first.picked()).isSameAs(b);
        assertThat(result.getSubchannel()).isSameAs(a); // a was the first attempt's pick only before it was redone
    }

    @Test
    void offOrOutsideTheEngineThePickerIsTheChilds() {
        FakeSubchannel a = new FakeSubchannel("a");
        Attempt off = new Attempt(attemptOn(a), 0);
        Script child = new Script(PickResult.withSubchannel(a));
        assertThat(new TriedBackendsLoadBalancer.AvoidingPicker(child).pickSubchannel(args(off)))
                .isSameAs(child.given.get(0));
        assertThat(off.picked()).isNull();

        Script plain = new Script(PickResult.withSubchannel(a));
        assertThat(new TriedBackendsLoadBalancer.AvoidingPicker(plain).pickSubchannel(
                new PickSubchannelArgsImpl(METHOD, new Metadata(), CallOptions.DEFAULT, new NoDetails())))
                .isSameAs(plain.given.get(0));
        assertThat(plain.asked).isEqualTo(1);
    }

    // ---- the policy around grpc-java's round_robin ----

    @Test
    void aroundRoundRobinARetryAlwaysGetsTheUntriedReadyBackend() {
        Policy policy = Policy.roundRobin(3);
        policy.state(0, ConnectivityState.READY);
        policy.state(1, ConnectivityState.READY);
        policy.state(2, ConnectivityState.READY);
        SubchannelPicker picker = policy.helper.picker;
        for (int call = 0; call < 30; call++) {
            Attempt first = new Attempt(null, 5);
            Subchannel firstBackend = picker.pickSubchannel(args(first)).getSubchannel();
            Attempt second = new Attempt(first, 5);
            Subchannel secondBackend = picker.pickSubchannel(args(second)).getSubchannel();
            Attempt third = new Attempt(second, 5);
            Subchannel thirdBackend = picker.pickSubchannel(args(third)).getSubchannel();

            assertThat(List.of(firstBackend, secondBackend, thirdBackend)).doesNotHaveDuplicates().doesNotContainNull();
            assertThat(third.reused()).isNull();
            Attempt fourth = new Attempt(third, 5);
            assertThat(picker.pickSubchannel(args(fourth)).getSubchannel()).isNotNull();
            assertThat(fourth.reused()).isEqualTo(TriedBackends.NO_OTHER_READY); // round robin went round
        }
    }

    @Test
    void aRetryIsNeverQueuedForAnUntriedBackendThatIsStillConnecting() {
        Policy policy = Policy.roundRobin(2);
        policy.state(0, ConnectivityState.READY);
        policy.state(1, ConnectivityState.CONNECTING);
        SubchannelPicker picker = policy.helper.picker;
        Attempt first = new Attempt(null, 5);
        Subchannel tried = picker.pickSubchannel(args(first)).getSubchannel();
        assertThat(tried).isSameAs(policy.subchannel(0));

        Attempt retry = new Attempt(first, 5);
        PickResult result = picker.pickSubchannel(args(retry));

        assertThat(result.getSubchannel()).as("goes to the ready, tried backend at once").isSameAs(tried);
        assertThat(retry.reused()).isEqualTo(TriedBackends.NO_OTHER_READY);
        policy.state(1, ConnectivityState.READY); // once the other is ready, the next retry goes there
        Attempt third = new Attempt(retry, 5);
        assertThat(policy.helper.picker.pickSubchannel(args(third)).getSubchannel()).isSameAs(policy.subchannel(1));
    }

    @Test
    void theProviderParsesItsChildListAndWrapsEveryWayAServiceConfigNamesAPolicy() {
        TriedBackendsLoadBalancerProvider provider = new TriedBackendsLoadBalancerProvider();
        assertThat(LoadBalancerRegistry.getDefaultRegistry().getProvider(TriedBackendsLoadBalancerProvider.POLICY_NAME))
                .as("registered through META-INF/services").isInstanceOf(TriedBackendsLoadBalancerProvider.class);
        NameResolver.ConfigOrError ok = provider.parseLoadBalancingPolicyConfig(
                Map.of("childPolicy", List.of(Map.of("no_such_policy", Map.of()), Map.of("round_robin", Map.of()))));
        assertThat(ok.getError()).isNull();
        NameResolver.ConfigOrError none = provider.parseLoadBalancingPolicyConfig(Map.of());
        assertThat(none.getError()).isNotNull();
        assertThat(none.getError().getDescription()).contains("childPolicy");
        NameResolver.ConfigOrError unknown = provider.parseLoadBalancingPolicyConfig(
                Map.of("childPolicy", List.of(Map.of("no_such_policy", Map.of()))));
        assertThat(unknown.getError()).isNotNull();

        Map<String, Object> plain = TriedBackendsLoadBalancerProvider.wrap(Map.of("methodConfig", List.of()), "round_robin");
        assertThat(plain).containsEntry("methodConfig", List.of()).containsEntry("loadBalancingConfig", List.of(Map.of(
                TriedBackendsLoadBalancerProvider.POLICY_NAME, Map.of("childPolicy", List.of(Map.of("round_robin", Map.of()))))));
        List<Map<String, Object>> own = List.of(Map.of("weighted_round_robin", Map.of()), Map.of("round_robin", Map.of()));
        Map<String, Object> listed = TriedBackendsLoadBalancerProvider.wrap(Map.of("loadBalancingConfig", own), "pick_first");
        assertThat(listed.get("loadBalancingConfig")).isEqualTo(List.of(Map.of(
                TriedBackendsLoadBalancerProvider.POLICY_NAME, Map.of("childPolicy", own))));
        assertThat(TriedBackendsLoadBalancerProvider.wrap(listed, null)).isEqualTo(listed);
        assertThat(TriedBackendsLoadBalancerProvider.wrap(Map.of("loadBalancingPolicy", "ROUND_ROBIN"), null))
                .doesNotContainKey("loadBalancingPolicy").containsEntry("loadBalancingConfig", List.of(Map.of(
                        TriedBackendsLoadBalancerProvider.POLICY_NAME,
                        Map.of("childPolicy", List.of(Map.of("round_robin", Map.of()))))));
        assertThat(TriedBackendsLoadBalancerProvider.wrap(Map.of(), null).get("loadBalancingConfig")).isEqualTo(List.of(
                Map.of(TriedBackendsLoadBalancerProvider.POLICY_NAME,
                        Map.of("childPolicy", List.of(Map.of("pick_first", Map.of()))))));
    }

    // ---- fakes ----

    private static Attempt attemptOn(Subchannel s) {
        Attempt a = new Attempt(null, 5);
        a.picked(s, TriedBackends.notReused());
        return a;
    }

    private static LoadBalancer.PickSubchannelArgs args(TriedBackends attempt) {
        CallOptions options = CallOptions.DEFAULT.withStreamTracerFactory(new ClientStreamTracer.Factory() {
        }).withStreamTracerFactory(attempt);
        return new PickSubchannelArgsImpl(METHOD, new Metadata(), options, new NoDetails());
    }

    /** An engine attempt's factory as the picker sees it. */
    static final class Attempt extends TriedBackends {
        private final @Nullable Attempt earlier;
        private final int picks;

        Attempt(@Nullable Attempt earlier, int picks) {
            this.earlier = earlier;
            this.picks = picks;
        }

        @Override
        protected @Nullable TriedBackends earlier() {
            return earlier;
        }

        @Override
        protected int backendPicks() {
            return picks;
        }
    }

    /** A child picker that returns its script in order, the last result from then on. */
    static final class Script extends SubchannelPicker {
        final List<PickResult> given;
        private final Deque<PickResult> left;
        int asked;

        Script(PickResult... results) {
            this.given = List.of(results);
            this.left = new ArrayDeque<>(given);
        }

        @Override
        public PickResult pickSubchannel(LoadBalancer.PickSubchannelArgs args) {
            asked++;
            return left.size() > 1 ? left.poll() : left.peek();
        }
    }

    static final class FakeSubchannel extends Subchannel {
        private final String name;
        final List<EquivalentAddressGroup> addresses;
        LoadBalancer.@Nullable SubchannelStateListener listener;

        FakeSubchannel(String name) {
            this(name, List.of());
        }

        FakeSubchannel(String name, List<EquivalentAddressGroup> addresses) {
            this.name = name;
            this.addresses = addresses;
        }

        @Override
        public void start(LoadBalancer.SubchannelStateListener listener) {
            this.listener = listener;
        }

        @Override
        public void shutdown() {
        }

        @Override
        public void requestConnection() {
        }

        @Override
        public List<EquivalentAddressGroup> getAllAddresses() {
            return addresses;
        }

        @Override
        public Attributes getAttributes() {
            return Attributes.EMPTY;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** The policy, built from its parsed configuration around round_robin, on a helper that makes fake subchannels. */
    static final class Policy {
        final FakeHelper helper = new FakeHelper();
        final List<EquivalentAddressGroup> addresses = new ArrayList<>();

        static Policy roundRobin(int backends) {
            Policy p = new Policy();
            for (int i = 0; i < backends; i++) {
                p.addresses.add(new EquivalentAddressGroup(new InetSocketAddress("127.0.0.1", 10_000 + i)));
            }
            TriedBackendsLoadBalancerProvider provider = new TriedBackendsLoadBalancerProvider();
            Object config = provider.parseLoadBalancingPolicyConfig(
                    Map.of("childPolicy", List.of(Map.of("round_robin", Map.of())))).getConfig();
            LoadBalancer lb = provider.newLoadBalancer(p.helper);
            Status accepted = lb.acceptResolvedAddresses(LoadBalancer.ResolvedAddresses.newBuilder()
                    .setAddresses(p.addresses).setLoadBalancingPolicyConfig(config).build());
            assertThat(accepted.isOk()).isTrue();
            return p;
        }

        FakeSubchannel subchannel(int i) {
            return helper.byAddress.get(addresses.get(i));
        }

        void state(int i, ConnectivityState state) {
            FakeSubchannel s = subchannel(i);
            helper.sync.execute(() -> s.listener.onSubchannelState(ConnectivityStateInfo.forNonError(state)));
        }
    }

    static final class FakeHelper extends LoadBalancer.Helper {
        final SynchronizationContext sync = new SynchronizationContext((t, e) -> {
            throw new AssertionError(e);
        });
        final Map<EquivalentAddressGroup, FakeSubchannel> byAddress = new HashMap<>();
        SubchannelPicker picker = new Script(PickResult.withNoResult());

        @Override
        public Subchannel createSubchannel(LoadBalancer.CreateSubchannelArgs args) {
            EquivalentAddressGroup eag = args.getAddresses().get(0);
            FakeSubchannel s = new FakeSubchannel(eag.toString(), args.getAddresses());
            byAddress.put(new EquivalentAddressGroup(eag.getAddresses()), s);
            return s;
        }

        @Override
        public void updateBalancingState(ConnectivityState newState, SubchannelPicker newPicker) {
            assertThat(newPicker).isInstanceOf(TriedBackendsLoadBalancer.AvoidingPicker.class);
            picker = newPicker;
        }

        @Override
        public SynchronizationContext getSynchronizationContext() {
            return sync;
        }

        @Override
        public ManagedChannel createOobChannel(EquivalentAddressGroup eag, String authority) {
            throw new UnsupportedOperationException();
        }

        @Override
        public String getAuthority() {
            return "backends.test";
        }

        @Override
        public ChannelLogger getChannelLogger() {
            return new ChannelLogger() {
                @Override
                public void log(ChannelLogLevel level, String message) {
                }

                @Override
                public void log(ChannelLogLevel level, String messageFormat, Object... args) {
                }
            };
        }
    }

    static final class NoDetails implements LoadBalancer.PickDetailsConsumer {
    }

    static final class Text implements MethodDescriptor.Marshaller<String> {
        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            return "";
        }
    }
}
