package io.github.grpcretry.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The observations of the interceptor engine, as Micrometer's documentation tooling reads them: the
 * per-attempt observation {@value DefaultAttemptObservationConvention#NAME}, its key values and its events
 * (docs/observability.md lists them).
 */
public enum AttemptObservationDocumentation implements ObservationDocumentation {

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
