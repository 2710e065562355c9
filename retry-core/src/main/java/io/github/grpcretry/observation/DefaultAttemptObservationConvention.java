package io.github.grpcretry.observation;

import io.github.grpcretry.attempt.AttemptKind;
import io.github.grpcretry.attempt.CallTarget;
import io.grpc.Status;
import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The per-attempt observation as gRFC A72 and grpc-java's OpenTelemetry module name it: the observation
 * {@code grpc.client.attempt} (one timer name, low-cardinality tags), the span
 * {@code Attempt.<package.Service.Method>}; key values as listed in docs/observability.md. {@link Documentation}
 * lists them for Micrometer's documentation tooling.
 */
public class DefaultAttemptObservationConvention implements AttemptObservationConvention {

    /** The observation's name (and so the name of the timer Micrometer's meter handler makes of it). */
    public static final String NAME = "grpc.client.attempt";

    // Low cardinality.
    public static final String RPC_SYSTEM = "rpc.system";
    public static final String RPC_SERVICE = "rpc.service";
    public static final String RPC_METHOD = "rpc.method";
    public static final String CHANNEL = "grpc.client.channel";
    public static final String STATUS_CODE = "grpc.status_code";
    public static final String KIND = "grpc.retry.kind";
    public static final String COMMITTED = "grpc.retry.committed";
    /**
     * gRFC A72's {@code transparent-retry}: whether grpc-java sent the attempt's stream again transparently
     * (the attempt went on in a transparent retry); false at the start.
     */
    public static final String TRANSPARENT_RETRY = "transparent-retry";

    // High cardinality.
    /** gRFC A72: attempts of the call before this one. */
    public static final String PREVIOUS_RPC_ATTEMPTS = "previous-rpc-attempts";
    public static final String DELAY_MS = "grpc.retry.delay_ms";
    public static final String PUSHBACK_MS = "grpc.retry.pushback_ms";
    /** Where a retry's delay came from: {@code policy}, {@code pushback} or {@code retry_info}. */
    public static final String DELAY_SOURCE = "grpc.retry.delay_source";
    /** Streams grpc-java sent again transparently under the attempt (present when there were any). */
    public static final String TRANSPARENT_RETRIES = "grpc.retry.transparent_retries";
    /** OpenTelemetry's RPC conventions: the address of the backend the attempt reached (present once known). */
    public static final String NETWORK_PEER_ADDRESS = "network.peer.address";
    /** OpenTelemetry's RPC conventions: the port of that backend (present once known, for an IP address). */
    public static final String NETWORK_PEER_PORT = "network.peer.port";

    private static final KeyValue SYSTEM = KeyValue.of(RPC_SYSTEM, "grpc");
    private static final KeyValue NOT_TRANSPARENT = KeyValue.of(TRANSPARENT_RETRY, "false");
    private static final KeyValue TRANSPARENT = KeyValue.of(TRANSPARENT_RETRY, "true");
    private static final String[] PREVIOUS = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};

    private static final AttemptKind[] KINDS = AttemptKind.values();
    private static final Status.Code[] CODES = Status.Code.values();

    private final ConcurrentHashMap<String, String[]> names = new ConcurrentHashMap<>();
    /** Per channel and method: the start's key values by kind, then the stop's by kind, code and committed. */
    private final ConcurrentHashMap<CallTarget, KeyValues[]> lowCardinality = new ConcurrentHashMap<>();

    @Override
    public String getName() {
        return NAME;
    }

    /** {@code "Attempt." + fullMethodName} with {@code /} replaced by {@code .}. */
    @Override
    public String getContextualName(AttemptObservationContext context) {
        return names(context)[0];
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(AttemptObservationContext context) {
        KeyValues[] all = lowCardinality.get(context.getTarget());
        if (all == null) {
            all = lowCardinality.computeIfAbsent(context.getTarget(),
                    t -> new KeyValues[KINDS.length * (1 + CODES.length * 2) * 2]);
        }
        int kind = context.getAttemptKind().ordinal();
        Status.Code code = context.getStatusCode();
        boolean transparent = context.getTransparentRetries() > 0;
        int i = code == null ? kind : KINDS.length + (kind * CODES.length + code.ordinal()) * 2 + (context.isCommitted() ? 1 : 0);
        i = i * 2 + (transparent ? 1 : 0);
        KeyValues kv = all[i];
        if (kv == null) { // made once per channel, method and combination (a benign race makes an equal one)
            String[] n = names(context);
            kv = KeyValues.of(SYSTEM, KeyValue.of(RPC_SERVICE, n[1]), KeyValue.of(RPC_METHOD, n[2]),
                    KeyValue.of(CHANNEL, context.getTarget().channel()),
                    KeyValue.of(KIND, context.getAttemptKind().tagValue()), transparent ? TRANSPARENT : NOT_TRANSPARENT);
            if (code != null) { // ended: the stop's key values
                kv = kv.and(KeyValue.of(STATUS_CODE, code.name()),
                        KeyValue.of(COMMITTED, Boolean.toString(context.isCommitted())));
            }
            all[i] = kv;
        }
        return kv;
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(AttemptObservationContext context) {
        int previous = context.getPreviousAttempts();
        KeyValues kv = KeyValues.of(PREVIOUS_RPC_ATTEMPTS,
                previous < PREVIOUS.length ? PREVIOUS[previous] : Integer.toString(previous));
        if (context.getDelayNanos() >= 0) {
            kv = kv.and(DELAY_MS, Long.toString(TimeUnit.NANOSECONDS.toMillis(context.getDelayNanos())));
        }
        if (context.getDelaySource() != null) {
            kv = kv.and(DELAY_SOURCE, context.getDelaySource().tagValue());
        }
        int transparent = context.getTransparentRetries();
        if (transparent > 0) {
            kv = kv.and(TRANSPARENT_RETRIES, Integer.toString(transparent));
        }
        String pushback = context.getPushback();
        if (pushback != null) {
            kv = kv.and(PUSHBACK_MS, pushback);
        }
        String peer = context.getPeerAddress();
        if (peer != null) {
            kv = kv.and(NETWORK_PEER_ADDRESS, peer);
            if (context.getPeerPort() >= 0) {
                kv = kv.and(NETWORK_PEER_PORT, Integer.toString(context.getPeerPort()));
            }
        }
        return kv;
    }

    /** Span name, service and method of the context's method (made once per method). */
    private String[] names(AttemptObservationContext context) {
        String full = context.getTarget().fullMethodName();
        String[] n = names.get(full);
        if (n == null) {
            int slash = full.lastIndexOf('/');
            n = names.computeIfAbsent(full, f -> new String[] {"Attempt." + f.replace('/', '.'),
                    slash < 0 ? f : f.substring(0, slash), slash < 0 ? f : f.substring(slash + 1)});
        }
        return n;
    }

    /**
     * The observations of the interceptor engine, as Micrometer's documentation tooling reads them: the
     * per-attempt observation {@value #NAME}, its key values and its events
     * (docs/observability.md lists them).
     */
    public enum Documentation implements ObservationDocumentation {

        /** One attempt of a call, a child of the call's observation; its trace context goes into the attempt's headers. */
        ATTEMPT {
            @Override
            public String getName() {
                return DefaultAttemptObservationConvention.NAME;
            }

            @Override
            public String getContextualName() {
                return "Attempt.%s";
            }

            @Override
            public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
                return DefaultAttemptObservationConvention.class;
            }

            @Override
            public KeyName[] getLowCardinalityKeyNames() {
                return LowCardinalityKeys.values();
            }

            @Override
            public KeyName[] getHighCardinalityKeyNames() {
                return HighCardinalityKeys.values();
            }

            @Override
            public Observation.Event[] getEvents() {
                return Events.values();
            }
        };

        /** The attempt's low-cardinality key values (tags of the timer the meter handler makes). */
        public enum LowCardinalityKeys implements KeyName {
            /** Always {@code grpc}. */
            RPC_SYSTEM(DefaultAttemptObservationConvention.RPC_SYSTEM),
            /** {@code package.Service}. */
            RPC_SERVICE(DefaultAttemptObservationConvention.RPC_SERVICE),
            /** The method's name within its service. */
            RPC_METHOD(DefaultAttemptObservationConvention.RPC_METHOD),
            /** The channel's name. */
            CHANNEL(DefaultAttemptObservationConvention.CHANNEL),
            /** {@code initial}, {@code retry} or {@code hedge}. */
            KIND(DefaultAttemptObservationConvention.KIND),
            /** Whether grpc-java sent the attempt's stream again transparently. */
            TRANSPARENT_RETRY(DefaultAttemptObservationConvention.TRANSPARENT_RETRY),
            /** The attempt's status code, once it ended. */
            STATUS_CODE(DefaultAttemptObservationConvention.STATUS_CODE) {
                @Override
                public boolean isRequired() {
                    return false;
                }
            },
            /** Whether the call's answer is this attempt's, once it ended. */
            COMMITTED(DefaultAttemptObservationConvention.COMMITTED) {
                @Override
                public boolean isRequired() {
                    return false;
                }
            };

            private final String key;

            LowCardinalityKeys(String key) {
                this.key = key;
            }

            @Override
            public String asString() {
                return key;
            }
        }

        /** The attempt's high-cardinality key values (span attributes only). */
        public enum HighCardinalityKeys implements KeyName {
            /** Attempts of the call before this one. */
            PREVIOUS_RPC_ATTEMPTS(DefaultAttemptObservationConvention.PREVIOUS_RPC_ATTEMPTS),
            /** What the engine waited before a retry or hedge, in milliseconds. */
            DELAY_MS(DefaultAttemptObservationConvention.DELAY_MS) {
                @Override
                public boolean isRequired() {
                    return false;
                }
            },
            /** Where that delay came from: {@code policy}, {@code pushback} or {@code retry_info}. */
            DELAY_SOURCE(DefaultAttemptObservationConvention.DELAY_SOURCE) {
                @Override
                public boolean isRequired() {
                    return false;
                }
            },
            /** The {@code grpc-retry-pushback-ms} trailer the attempt received. */
            PUSHBACK_MS(DefaultAttemptObservationConvention.PUSHBACK_MS) {
                @Override
                public boolean isRequired() {
                    return false;
                }
            },
            /** Streams grpc-java sent again transparently under the attempt. */
            TRANSPARENT_RETRIES(DefaultAttemptObservationConvention.TRANSPARENT_RETRIES) {
                @Override
                public boolean isRequired() {
                    return false;
                }
            },
            /** The address of the backend the attempt reached (OpenTelemetry's RPC conventions). */
            NETWORK_PEER_ADDRESS(DefaultAttemptObservationConvention.NETWORK_PEER_ADDRESS) {
                @Override
                public boolean isRequired() {
                    return false;
                }
            },
            /** The port of the backend the attempt reached. */
            NETWORK_PEER_PORT(DefaultAttemptObservationConvention.NETWORK_PEER_PORT) {
                @Override
                public boolean isRequired() {
                    return false;
                }
            };

            private final String key;

            HighCardinalityKeys(String key) {
                this.key = key;
            }

            @Override
            public String asString() {
                return key;
            }
        }

        /** Events on the attempt's observation. */
        public enum Events implements Observation.Event {
            /** grpc-java sent the attempt's stream again transparently. */
            TRANSPARENT_RETRY {
                @Override
                public String getName() {
                    return ObservationAttemptObserver.TRANSPARENT_RETRY_EVENT;
                }
            }
        }
    }
}
