package io.github.grpcretry.internal.backends;

import io.grpc.ConnectivityState;
import io.grpc.LoadBalancer;
import io.grpc.Status;
import io.grpc.util.ForwardingLoadBalancerHelper;
import io.grpc.util.GracefulSwitchLoadBalancer;

/**
 * Runs the application's policy (a {@link GracefulSwitchLoadBalancer} given the child list of the configuration)
 * and hands the channel each picker of the child wrapped in an {@link AvoidingPicker}. Everything else (addresses,
 * subchannels, connection requests, name resolution errors) goes to the child unchanged.
 */
final class TriedBackendsLoadBalancer extends LoadBalancer {

    private final GracefulSwitchLoadBalancer child;

    TriedBackendsLoadBalancer(Helper helper) {
        this.child = new GracefulSwitchLoadBalancer(new ForwardingLoadBalancerHelper() {
            @Override
            protected Helper delegate() {
                return helper;
            }

            @Override
            public void updateBalancingState(ConnectivityState state, SubchannelPicker picker) {
                helper.updateBalancingState(state, new AvoidingPicker(picker));
            }
        });
    }

    @Override
    public Status acceptResolvedAddresses(ResolvedAddresses resolvedAddresses) {
        Object config = resolvedAddresses.getLoadBalancingPolicyConfig();
        if (!(config instanceof TriedBackendsLoadBalancerProvider.Config c)) {
            Status missing = Status.INTERNAL.withDescription(
                    TriedBackendsLoadBalancerProvider.POLICY_NAME + " was given no child policy: " + config);
            child.handleNameResolutionError(missing);
            return missing;
        }
        return child.acceptResolvedAddresses(
                resolvedAddresses.toBuilder().setLoadBalancingPolicyConfig(c.child()).build());
    }

    @Override
    public void handleNameResolutionError(Status error) {
        child.handleNameResolutionError(error);
    }

    @Override
    public void requestConnection() {
        child.requestConnection();
    }

    @Override
    public void shutdown() {
        child.shutdown();
    }

    /**
     * The child's picker, asked again when it returns a subchannel an earlier attempt of the call chose, up to the
     * call's {@code backend-picks} picks in all; the last pick is kept when every one of them was tried. The search
     * ends early when the child returns the subchannel it began with again (a round-robin picker has gone round,
     * pick_first and a consistent hash always return the same one): counted as {@code no_other_ready}; when the
     * picks run out first, as {@code picks_exhausted}. A pick without a subchannel (a drop, an error, no result
     * yet) is returned as the child gave it when it is the first; on a later pick it ends the search with the
     * tried subchannel already at hand, so a call never waits for an untried backend to connect. The result returned is always one of the child's, unchanged (its stream tracer factory and
     * authority). Each attempt's final pick is recorded in its {@link TriedBackends}.
     */
    static final class AvoidingPicker extends SubchannelPicker {
        private final SubchannelPicker child;

        AvoidingPicker(SubchannelPicker child) {
            this.child = child;
        }

        @Override
        public PickResult pickSubchannel(PickSubchannelArgs args) {
            PickResult result = child.pickSubchannel(args);
            TriedBackends attempt = TriedBackends.of(args.getCallOptions());
            Subchannel chosen = result.getSubchannel();
            if (attempt == null || chosen == null) {
                return result;
            }
            int picks = attempt.backendPicks();
            if (picks <= 0 || !attempt.hasEarlier() || !attempt.triedEarlier(chosen)) {
                if (picks > 0) {
                    attempt.picked(chosen, TriedBackends.notReused());
                }
                return result;
            }
            Subchannel first = chosen;
            // the child came back to the first subchannel: it has likely shown all it has ready. The picks go on all
            // the same: under concurrent calls a round_robin's index moves between two picks of this one, so the
            // same subchannel again says little, and a pick costs next to nothing beside a retry
            boolean cycled = false;
            for (int pick = 2; pick <= picks; pick++) {
                PickResult again = child.pickSubchannel(args);
                Subchannel other = again.getSubchannel();
                if (other == null) {
                    cycled = true; // a drop, an error or no result: the tried one at hand rather than a wait
                    break;
                }
                cycled |= other == first;
                if (!attempt.triedEarlier(other)) {
                    attempt.picked(other, TriedBackends.notReused());
                    return again;
                }
                result = again;
                chosen = other;
            }
            attempt.picked(chosen, TriedBackends.reuseCode(!cycled));
            return result;
        }

        @Override
        public String toString() {
            return "AvoidingPicker{" + child + "}";
        }
    }
}
