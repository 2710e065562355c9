package io.github.grpcretry.observation;

import io.github.grpcretry.attempt.AttemptKind;
import io.github.grpcretry.attempt.AttemptObserver;
import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.attempt.DelaySource;
import io.github.grpcretry.attempt.SuppressionReason;
import io.github.grpcretry.internal.callback.CallbackFailures;
import io.grpc.Metadata;
import io.grpc.Status;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * An observation per attempt of the interceptor engine (Micrometer's Observation API, so it reaches
 * Brave or OpenTelemetry through micrometer-tracing, and meters through the meter handler):
 * <ul>
 *   <li>a call is followed when an observation is current on the thread that starts it (the call's own,
 *       opened by net.devh's or Spring gRPC's observation interceptor outside the engine); a call without
 *       one, or with a no-op one, is not (nothing is allocated for it);</li>
 *   <li>each attempt is a child observation {@code grpc.client.attempt} of the call's, named
 *       {@code Attempt.<package.Service.Method>} (gRFC A72), started before the attempt's headers go out:
 *       its carrier is the attempt's own copy of the headers, so a propagating tracing handler puts the
 *       attempt's trace context there, replacing the call's, and the server's span is the attempt's
 *       child;</li>
 *   <li>a stream grpc-java sends again transparently under an attempt (the server refused it before its
 *       application saw it) is an event {@value #TRANSPARENT_RETRY_EVENT} on the attempt's observation, and
 *       counted in its context;</li>
 *   <li>a retry or hedge that is not sent is an event {@code retry.suppressed.<reason>} on the call's
 *       observation.</li>
 * </ul>
 * A handler that throws is logged once and counted (docs/design.md §14); the call goes on.
 */
public final class ObservationAttemptObserver implements AttemptObserver {

    private static final String ROLE = "ObservationHandler";
    private static final String OUTCOME = "the attempt's observation may be incomplete, the call goes on";
    private static final Metadata.Key<String> PUSHBACK =
            Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER);
    private static final Observation.Event[] SUPPRESSED = new Observation.Event[SuppressionReason.values().length];
    private static final DefaultAttemptObservationConvention DEFAULT = new DefaultAttemptObservationConvention();

    /** The event on an attempt's observation when grpc-java sends its stream again transparently. */
    public static final String TRANSPARENT_RETRY_EVENT = "transparent-retry";
    private static final Observation.Event TRANSPARENT = Observation.Event.of(TRANSPARENT_RETRY_EVENT);

    static {
        for (SuppressionReason r : SuppressionReason.values()) {
            SUPPRESSED[r.ordinal()] = Observation.Event.of(suppressedEventName(r));
        }
    }

    private final ObservationRegistry registry;
    private final @Nullable AttemptObservationConvention convention;

    /** Attempts observed in {@code registry} with the default convention. */
    public ObservationAttemptObserver(ObservationRegistry registry) {
        this(registry, null);
    }

    /** Attempts observed in {@code registry}; {@code convention} (absent = the default) names them. */
    public ObservationAttemptObserver(ObservationRegistry registry, @Nullable AttemptObservationConvention convention) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.convention = convention;
    }

    /** The name of the event a suppressed retry puts on the call's observation: {@code retry.suppressed.<reason>}. */
    public static String suppressedEventName(SuppressionReason reason) {
        return "retry.suppressed." + reason.tagValue();
    }

    @Override
    public @Nullable Call callStarted(CallTarget target) {
        Observation parent = registry.isNoop() ? null : registry.getCurrentObservation();
        return parent == null || parent.isNoop() ? null : new FollowedCall(target, parent);
    }

    private void failed(String kind, RuntimeException e) {
        CallbackFailures.SHARED.failed(ROLE, this, kind, e, OUTCOME);
    }

    @Override
    public String toString() {
        return "ObservationAttemptObserver[" + registry + "]";
    }

    /** A call whose attempts are observed as children of {@link #parent}. */
    private final class FollowedCall implements Call {
        private final CallTarget target;
        private final Observation parent;

        FollowedCall(CallTarget target, Observation parent) {
            this.target = target;
            this.parent = parent;
        }

        @Override
        public Attempt attemptStarting(AttemptKind kind, int attemptNumber, long delayNanos, Metadata headers) {
            return attemptStarting(kind, attemptNumber, delayNanos, null, headers);
        }

        @Override
        public Attempt attemptStarting(AttemptKind kind, int attemptNumber, long delayNanos,
                @Nullable DelaySource source, Metadata headers) {
            AttemptObservationContext context = new AttemptObservationContext(target, kind, attemptNumber,
                    Math.max(-1, delayNanos), source, headers);
            Observation observation;
            try {
                observation = Observation.createNotStarted(convention, DEFAULT, () -> context, registry)
                        .parentObservation(parent)
                        .start();
            } catch (RuntimeException e) {
                failed("start", e);
                observation = Observation.NOOP;
            }
            return new ObservedAttempt(observation, context);
        }

        @Override
        public void retrySuppressed(SuppressionReason reason, Status.Code code) {
            try {
                parent.event(SUPPRESSED[reason.ordinal()]);
            } catch (RuntimeException e) {
                failed("event", e);
            }
        }
    }

    /** One attempt's observation. */
    private final class ObservedAttempt implements Attempt {
        private final Observation observation;
        private final AttemptObservationContext context;

        ObservedAttempt(Observation observation, AttemptObservationContext context) {
            this.observation = observation;
            this.context = context;
        }

        @Override
        public Scope openScope() {
            try {
                Observation.Scope scope = observation.openScope();
                return () -> {
                    try {
                        scope.close();
                    } catch (RuntimeException e) {
                        failed("closeScope", e);
                    }
                };
            } catch (RuntimeException e) {
                failed("openScope", e);
                return () -> { };
            }
        }

        @Override
        public void ended(Status status, Metadata trailers, boolean committed, boolean cancelledByEngine) {
            context.ended(status.getCode(), trailers.get(PUSHBACK), committed, cancelledByEngine);
            try {
                if (!status.isOk() && !cancelledByEngine) {
                    observation.error(status.asRuntimeException());
                }
                observation.stop();
            } catch (RuntimeException e) {
                failed("stop", e);
            }
        }

        @Override
        public void peer(java.net.SocketAddress address) {
            context.peer(address);
        }

        @Override
        public void transparentRetry() {
            context.transparentRetry();
            try {
                observation.event(TRANSPARENT);
            } catch (RuntimeException e) {
                failed("event", e);
            }
        }
    }
}
