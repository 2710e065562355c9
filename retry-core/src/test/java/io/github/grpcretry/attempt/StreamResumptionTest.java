package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.attempt.LongStreamRig.Arrival;
import io.github.grpcretry.attempt.LongStreamRig.OffsetResumption;
import io.github.grpcretry.attempt.LongStreamRig.Reader;
import io.github.grpcretry.internal.callback.CallbackFailures;
import io.github.grpcretry.observation.DefaultAttemptObservationConvention;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Resumption of a server stream after its commit (docs/how-it-works.md "Resuming a server stream"), over Netty on
 * loopback: a stream of 10 offsets whose server breaks it (UNAVAILABLE) after every third message it sends.
 */
class StreamResumptionTest {

    private static final List<String> ALL = IntStream.range(0, LongStreamRig.TOTAL).mapToObj(Integer::toString).toList();

    @Test
    void aStreamThatBreaksAfterEveryThirdMessageResumesThreeTimesAndDeliversAllTenOnceInOrder() throws Exception {
        OffsetResumption resumption = new OffsetResumption();
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(null, 3), resumption,
                a -> a.sendThenBreak(3))) {
            Reader reader = rig.start(new Reader(1), CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS));
            Status status = reader.await();
            assertThat(status.getCode()).as("%s", status).isEqualTo(Status.Code.OK);
            assertThat(reader.responses).as("every offset once, in order").isEqualTo(ALL);
            assertThat(reader.headers()).as("the first attempt's headers, once").isEqualTo(1);
            assertThat(reader.violations).isEmpty();
            assertThat(rig.froms()).as("each resumed attempt asks from the offset after the last delivered")
                    .containsExactly(0, 3, 6, 9);
            assertThat(rig.previousAttempts()).as("grpc-previous-rpc-attempts as the server saw it")
                    .containsExactly("null", "1", "2", "3");
            assertThat(resumption.resumers).as("one resumer, made at the request").hasValue(1);
            assertThat(resumption.delivered).isEqualTo(ALL);
            assertThat(rig.startedKinds()).containsExactly(AttemptKind.INITIAL, AttemptKind.RESUME, AttemptKind.RESUME,
                    AttemptKind.RESUME);
            assertThat(rig.events.ofType("retryScheduled")).extracting(RecordingEvents.Event::attempt).containsExactly(2, 3, 4);
            assertThat(rig.events.ofType("committed")).as("the first attempt's headers commit the call, once").hasSize(1);
            assertThat(rig.attemptsMeter(AttemptKind.RESUME)).as("grpc.client.retry.attempts{kind=resume}").isEqualTo(3);
            assertThat(rig.attemptsMeter(AttemptKind.INITIAL)).isEqualTo(1);
            assertThat(rig.events.suppressions()).isEmpty();
            // each resumed attempt is an attempt span of its own, under the same call
            RetryEngineTest.waitFor(() -> rig.spans.size() == 4);
            assertThat(rig.spanValues(DefaultAttemptObservationConvention.KIND)).containsExactly("initial", "resume",
                    "resume", "resume");
            assertThat(rig.spanValues(DefaultAttemptObservationConvention.PREVIOUS_RPC_ATTEMPTS)).containsExactly("0", "1",
                    "2", "3");
            assertThat(rig.spanValues(DefaultAttemptObservationConvention.STATUS_CODE)).containsExactly("UNAVAILABLE",
                    "UNAVAILABLE", "UNAVAILABLE", "OK");
            assertThat(rig.spanValues(DefaultAttemptObservationConvention.COMMITTED)).as("each served the application")
                    .containsOnly("true");
            assertThat(rig.spanValues(DefaultAttemptObservationConvention.DELAY_SOURCE)).containsExactly(null, "policy",
                    "policy", "policy");
            CallState end = ((EngineCall<?, ?>) reader.call).state(); // interrupted and resumed three times, then finished
            assertThat(end.phase()).isEqualTo(CallState.Phase.FINISHED);
            assertThat(end.attempts()).isEqualTo(4);
            assertThat(end.committed()).as("the last resumed attempt is the call's").isEqualTo(4);
        }
    }

    @Test
    void maxResumesStopsItWithTheBreaksStatus() throws Exception {
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(null, 2),
                new OffsetResumption(), a -> a.sendThenBreak(3))) {
            Reader reader = rig.start(new Reader(1), CallOptions.DEFAULT);
            Status status = reader.await();
            assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(status.getDescription()).isEqualTo("stream broke");
            assertThat(reader.responses).isEqualTo(ALL.subList(0, 9));
            assertThat(rig.froms()).containsExactly(0, 3, 6);
            assertThat(rig.events.suppressions()).containsExactly(SuppressionReason.MAX_ATTEMPTS);
        }
    }

    @Test
    void noResumptionWithMaxResumesZero() throws Exception {
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(null, 0),
                new OffsetResumption(), a -> a.sendThenBreak(3))) {
            Reader reader = rig.start(new Reader(1), CallOptions.DEFAULT);
            assertThat(reader.await().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(reader.responses).isEqualTo(ALL.subList(0, 3));
            assertThat(rig.froms()).containsExactly(0);
            assertThat(rig.events.suppressions()).as("as any committed call the policy would have retried")
                    .containsExactly(SuppressionReason.COMMITTED);
        }
    }

    @Test
    void aResumerThatReturnsNullEndsTheCallWithTheBreaksStatusCountedResumeRefused() throws Exception {
        OffsetResumption resumption = new OffsetResumption();
        resumption.refuse = true;
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(null, 3), resumption,
                a -> a.sendThenBreak(3))) {
            Reader reader = rig.start(new Reader(1), CallOptions.DEFAULT);
            Status status = reader.await();
            assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(status.getDescription()).isEqualTo("stream broke");
            assertThat(reader.responses).isEqualTo(ALL.subList(0, 3));
            assertThat(rig.froms()).containsExactly(0);
            assertThat(rig.events.suppressions()).containsExactly(SuppressionReason.RESUME_REFUSED);
            assertThat(rig.suppressedMeter(SuppressionReason.RESUME_REFUSED)).isEqualTo(1);
        }
    }

    @Test
    void aDeadlineThatExpiresDuringTheResumeBackoffEndsTheCallDeadlineExceeded() throws Exception {
        long deadlineMs = 600;
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10_000), LongStreamRig.streams(null, 3),
                new OffsetResumption(), a -> a.sendThenBreak(3))) {
            Reader reader = rig.start(new Reader(1), CallOptions.DEFAULT.withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS));
            Status status = reader.await();
            assertThat(status.getCode()).as("%s", status).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
            assertThat(reader.elapsedMillis()).as("at the deadline, not after the backoff")
                    .isBetween(deadlineMs - 50, 5_000L);
            assertThat(reader.responses).isEqualTo(ALL.subList(0, 3));
            assertThat(rig.froms()).as("no resumed attempt").containsExactly(0);
            assertThat(rig.events.suppressions()).containsExactly(SuppressionReason.DEADLINE);
            assertThat(rig.events.ofType("retryScheduled")).as("no resumption is reported scheduled: none follows").isEmpty();
        }
    }

    @Test
    void cancellationDuringAResumedAttemptReachesTheServerAndTheApplicationHearsOnlyItsClose() throws Exception {
        CountDownLatch holding = new CountDownLatch(1);
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(null, 3),
                new OffsetResumption(), a -> {
                    if (a.attempt == 1) {
                        a.sendThenBreak(3);
                    } else {
                        a.send(1); // then holds the stream open
                        holding.countDown();
                    }
                })) {
            Reader reader = rig.start(new Reader(1) {
                @Override
                void served(int count) {
                    if (count == 4) {
                        call.cancel("enough", null); // within the resumed attempt, after its first message
                    } else {
                        super.served(count);
                    }
                }
            }, CallOptions.DEFAULT);
            Status status = reader.await();
            assertThat(status.getCode()).isEqualTo(Status.Code.CANCELLED);
            assertThat(reader.responses).isEqualTo(ALL.subList(0, 4));
            assertThat(holding.await(LongStreamRig.WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            Arrival resumed = rig.byAttempt().get(1);
            assertThat(resumed.cancelled.await(LongStreamRig.WAIT_SECONDS, TimeUnit.SECONDS))
                    .as("the server saw the resumed attempt cancelled").isTrue();
            assertThat(rig.startedKinds()).containsExactly(AttemptKind.INITIAL, AttemptKind.RESUME);
        }
    }

    @Test
    void cancellationDuringTheResumeBackoffEndsTheCallAndItsTimer() throws Exception {
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10_000), LongStreamRig.streams(null, 3),
                new OffsetResumption(), a -> a.sendThenBreak(3))) {
            Reader reader = rig.start(new Reader(1), CallOptions.DEFAULT);
            RetryEngineTest.waitFor(() -> rig.events.ofType("retryScheduled").size() == 1);
            reader.call.cancel("stop waiting", null);
            Status status = reader.await();
            assertThat(status.getCode()).isEqualTo(Status.Code.CANCELLED);
            assertThat(reader.responses).isEqualTo(ALL.subList(0, 3));
            assertThat(rig.froms()).containsExactly(0);
        } // close: no timer outstanding
    }

    @Test
    void aSlowReaderAcrossResumptionsIsServedWhatItAskedForNothingLostNothingTwice() throws Exception {
        for (int batch : new int[] {1, 2, 4}) {
            try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(null, 3),
                    new OffsetResumption(), a -> a.sendThenBreak(3))) {
                Reader reader = rig.start(new Reader(batch), CallOptions.DEFAULT);
                assertThat(reader.await().getCode()).as("batch %d", batch).isEqualTo(Status.Code.OK);
                assertThat(reader.responses).as("batch %d", batch).isEqualTo(ALL);
                assertThat(reader.violations).as("batch %d: never served more than asked for", batch).isEmpty();
                assertThat(rig.froms()).containsExactly(0, 3, 6, 9);
            }
        }
    }

    @Test
    void onlyAServerStreamingMethodCanBeResumed() {
        for (MethodDescriptor<SimpleRequest, SimpleResponse> m : List.of(Rpc.UNARY, Rpc.CLIENT_STREAMING, Rpc.BIDI)) {
            StreamResumption<SimpleRequest, SimpleResponse> r = new OffsetResumption() {
                @Override
                public MethodDescriptor<SimpleRequest, SimpleResponse> method() {
                    return m;
                }
            };
            RetryingClientInterceptor.Builder b = RetryingClientInterceptor.builder(Configs.channel(LongStreamRig.policy(10)));
            assertThatThrownBy(() -> b.streamResumptions(List.of(r))).as("%s", m.getType())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(m.getFullMethodName()).hasMessageContaining(m.getType().name());
        }
        RetryingClientInterceptor.Builder b = RetryingClientInterceptor.builder(Configs.channel(LongStreamRig.policy(10)));
        assertThatThrownBy(() -> b.streamResumptions(List.of(new OffsetResumption(), new OffsetResumption())))
                .as("two for one method").isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Two StreamResumptions");
    }

    @Test
    void aBidiCallIsNeverResumedItsBreakEndsIt() throws Exception {
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(null, 3),
                new OffsetResumption(), a -> a.sendThenBreak(3))) {
            Reader reader = rig.start(Rpc.BIDI, new Reader(1), CallOptions.DEFAULT);
            assertThat(reader.await().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(reader.responses).isEqualTo(ALL.subList(0, 3));
            assertThat(rig.arrivals).hasSize(1);
            assertThat(rig.events.suppressions()).containsExactly(SuppressionReason.COMMITTED);
        }
    }

    /** A resumption whose resumer runs {@code fail} (it throws) in {@code where}: start, delivered or resumeRequest. */
    private static StreamResumption<SimpleRequest, SimpleResponse> throwingFrom(String where, Runnable fail) {
        return new StreamResumption<>() {
            @Override
            public MethodDescriptor<SimpleRequest, SimpleResponse> method() {
                return Rpc.SERVER_STREAMING;
            }

            @Override
            public Resumer<SimpleRequest, SimpleResponse> start(SimpleRequest request) {
                if (where.equals("start")) {
                    fail.run();
                }
                return new Resumer<>() {
                    @Override
                    public void delivered(SimpleResponse response) {
                        if (where.equals("delivered")) {
                            fail.run();
                        }
                    }

                    @Override
                    public @Nullable SimpleRequest resumeRequest() {
                        if (where.equals("resumeRequest")) {
                            fail.run();
                        }
                        return request;
                    }
                };
            }
        };
    }

    /**
     * A resumer that throws, an exception or an Error (an assertion of the application's), from start, delivered or
     * resumeRequest: it never reaches the application, the responses go on to the listener, the call is not resumed:
     * the break ends it with its status, counted resume_refused (docs/design.md §14). An Error from delivered used to
     * leave the listener's delivery held, and the call never closed.
     */
    @ParameterizedTest
    @CsvSource({"start,exception", "delivered,exception", "resumeRequest,exception", "start,error", "delivered,error",
            "resumeRequest,error"})
    void aResumerThatThrowsNeverReachesTheApplicationTheCallEndsWithTheBreak(String where, String what) throws Exception {
        StreamResumption<SimpleRequest, SimpleResponse> throwing = throwingFrom(where, () -> {
            if (what.equals("error")) {
                throw new AssertionError("the resumer's own check failed in " + where);
            }
            throw new IllegalStateException("resumer failed in " + where);
        });
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(null, 3), throwing,
                a -> a.sendThenBreak(3))) {
            Reader reader = rig.start(new Reader(1), CallOptions.DEFAULT);
            Status status = reader.await();
            assertThat(status.getCode()).as("%s", status).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(status.getDescription()).isEqualTo("stream broke");
            assertThat(reader.responses).isEqualTo(ALL.subList(0, 3));
            assertThat(rig.froms()).containsExactly(0);
            assertThat(rig.events.suppressions()).containsExactly(SuppressionReason.RESUME_REFUSED);
            assertThat(CallbackFailures.SHARED.count(throwing, where)).as("logged once, counted").isEqualTo(1);
        }
    }

    /**
     * The request marshaller fails on the resume request (it refuses "from=3"): the resumed attempt is cancelled and
     * the call ends CANCELLED "Failed to stream message" with the marshaller's exception as the cause, as a message
     * the application sends that fails to marshal; nothing escapes to a thread of the application's, nothing is left
     * open on the server, no timer is left.
     */
    @Test
    void aMarshallerThatFailsOnTheResumeRequestEndsTheCallCancelledWithItsCause() throws Exception {
        MethodDescriptor<SimpleRequest, SimpleResponse> refusingFrom3 = Rpc.SERVER_STREAMING.toBuilder(
                new MethodDescriptor.Marshaller<SimpleRequest>() {
                    @Override
                    public java.io.InputStream stream(SimpleRequest value) {
                        if (value.getRequestMessage().equals("from=3")) {
                            throw new IllegalArgumentException("cannot marshal from=3");
                        }
                        return Rpc.SERVER_STREAMING.getRequestMarshaller().stream(value);
                    }

                    @Override
                    public SimpleRequest parse(java.io.InputStream stream) {
                        return Rpc.SERVER_STREAMING.getRequestMarshaller().parse(stream);
                    }
                }, Rpc.SERVER_STREAMING.getResponseMarshaller()).build();
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(null, 3),
                new OffsetResumption(), a -> a.sendThenBreak(3))) {
            Reader reader = rig.start(refusingFrom3, new Reader(1), CallOptions.DEFAULT);
            Status status = reader.await();
            assertThat(status.getCode()).as("%s", status).isEqualTo(Status.Code.CANCELLED);
            assertThat(status.getDescription()).isEqualTo("Failed to stream message");
            assertThat(status.getCause()).isInstanceOf(IllegalArgumentException.class).hasMessage("cannot marshal from=3");
            assertThat(reader.responses).isEqualTo(ALL.subList(0, 3));
            RetryEngineTest.waitFor(() -> rig.events.ofType("attemptEnded").size() == 2); // the resumed one too
            for (Arrival a : rig.byAttempt().subList(1, rig.arrivals.size())) {
                assertThat(a.cancelled.await(LongStreamRig.WAIT_SECONDS, TimeUnit.SECONDS)).as("nothing left open").isTrue();
            }
        }
    }

    /**
     * A retry before the commit, then resumptions after it: grpc-previous-rpc-attempts counts every earlier attempt
     * of the call, the retry and the resumed attempts alike; the resumed ones start from where the stream broke.
     */
    @Test
    void previousAttemptsCountTheRetriesBeforeTheCommitAndTheResumptionsAfterIt() throws Exception {
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(null, 3),
                new OffsetResumption(), a -> {
                    if (a.attempt == 1) {
                        a.call.close(Status.UNAVAILABLE.withDescription("not yet"), new io.grpc.Metadata());
                    } else {
                        a.sendThenBreak(3);
                    }
                })) {
            Reader reader = rig.start(new Reader(1), CallOptions.DEFAULT);
            Status status = reader.await();
            assertThat(status.getCode()).as("%s", status).isEqualTo(Status.Code.OK);
            assertThat(reader.responses).isEqualTo(ALL);
            assertThat(reader.headers()).isEqualTo(1);
            assertThat(rig.froms()).containsExactly(0, 0, 3, 6, 9);
            assertThat(rig.previousAttempts()).containsExactly("null", "1", "2", "3", "4");
            assertThat(rig.startedKinds()).containsExactly(AttemptKind.INITIAL, AttemptKind.RETRY, AttemptKind.RESUME,
                    AttemptKind.RESUME, AttemptKind.RESUME);
        }
    }

    /**
     * The A6 throttle counts a break like a retry's failure: with max-tokens 4 (resumptions allowed while more than 2
     * are left) the first break leaves 3 and is resumed, the second leaves 2 and ends the call, counted throttled.
     */
    @Test
    void theThrottleCountsEachBreakAndStopsTheResumptions() throws Exception {
        ChannelRetryConfig throttled = Configs.channel(Configs.service(LongStreamRig.policy(10),
                new RetryThrottlingPolicy(4, 0.1)));
        try (LongStreamRig rig = new LongStreamRig(throttled, LongStreamRig.streams(null, 3), new OffsetResumption(),
                a -> a.sendThenBreak(3))) {
            Reader reader = rig.start(new Reader(1), CallOptions.DEFAULT);
            Status status = reader.await();
            assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(reader.responses).isEqualTo(ALL.subList(0, 6));
            assertThat(rig.froms()).containsExactly(0, 3);
            assertThat(rig.events.suppressions()).containsExactly(SuppressionReason.THROTTLED);
        }
    }

    /**
     * A StreamResumption for a server-streaming method the channel hedges: a hedged call is not resumed (no resumer
     * is made), and a break past its commit ends it with the break's status, as without a resumption.
     */
    @Test
    void aHedgedServerStreamIsNotResumed() throws Exception {
        ChannelRetryConfig hedged = Configs.channel(Configs.hedged(Configs.hedging(3, 5_000, Status.Code.UNAVAILABLE)));
        OffsetResumption resumption = new OffsetResumption();
        try (LongStreamRig rig = new LongStreamRig(hedged, LongStreamRig.streams(null, 3), resumption,
                a -> a.sendThenBreak(3))) {
            Reader reader = rig.start(new Reader(1), CallOptions.DEFAULT);
            Status status = reader.await();
            assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(status.getDescription()).isEqualTo("stream broke");
            assertThat(reader.responses).isEqualTo(ALL.subList(0, 3));
            assertThat(rig.arrivals).hasSize(1);
            assertThat(resumption.resumers).as("no resumer made").hasValue(0);
            assertThat(rig.startedKinds()).containsExactly(AttemptKind.INITIAL);
        }
    }

    /**
     * A method whose request type is Integer (an offset, with a marshaller of its own): the resumer is made with the
     * request the application sent, the Integer itself (the engine logs such a message wrapped, so that it is not
     * taken for a demand), and the stream resumes from the offset after the last one delivered.
     */
    @Test
    void aResumerOfAMethodWhoseRequestIsAnIntegerIsMadeWithThatInteger() throws Exception {
        MethodDescriptor<Integer, SimpleResponse> byOffset = Rpc.SERVER_STREAMING.toBuilder(
                new MethodDescriptor.Marshaller<Integer>() {
                    @Override
                    public java.io.InputStream stream(Integer from) {
                        return new java.io.ByteArrayInputStream(Rpc.request("from=" + from).toByteArray());
                    }

                    @Override
                    public Integer parse(java.io.InputStream stream) {
                        throw new UnsupportedOperationException("a client does not parse its requests");
                    }
                }, Rpc.SERVER_STREAMING.getResponseMarshaller()).build();
        StreamResumption<Integer, SimpleResponse> resumption = new StreamResumption<>() {
            @Override
            public MethodDescriptor<Integer, SimpleResponse> method() {
                return byOffset;
            }

            @Override
            public Resumer<Integer, SimpleResponse> start(Integer from) {
                return new Resumer<>() {
                    private int next = from;

                    @Override
                    public void delivered(SimpleResponse response) {
                        next = Integer.parseInt(response.getResponseMessage()) + 1;
                    }

                    @Override
                    public Integer resumeRequest() {
                        return next;
                    }
                };
            }
        };
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(null, 3), resumption,
                a -> a.sendThenBreak(3))) {
            List<String> responses = new java.util.concurrent.CopyOnWriteArrayList<>();
            io.github.grpcretry.testing.ContractListener<SimpleResponse> listener =
                    new io.github.grpcretry.testing.ContractListener<>(new io.grpc.ClientCall.Listener<>() {
                        @Override
                        public void onMessage(SimpleResponse message) {
                            responses.add(message.getResponseMessage());
                        }
                    });
            io.grpc.ClientCall<Integer, SimpleResponse> call = rig.channel.newCall(byOffset, CallOptions.DEFAULT);
            call.start(listener, new io.grpc.Metadata());
            call.request(Integer.MAX_VALUE);
            call.sendMessage(0);
            call.halfClose();
            Status status = listener.awaitClose(LongStreamRig.WAIT_SECONDS, TimeUnit.SECONDS);
            assertThat(status.getCode()).as("%s", status).isEqualTo(Status.Code.OK);
            assertThat(responses).isEqualTo(ALL);
            assertThat(rig.froms()).containsExactly(0, 3, 6, 9);
            assertThat(CallbackFailures.SHARED.count(resumption, "start")).as("the resumer was made").isZero();
        }
    }
}
