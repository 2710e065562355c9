package io.github.grpcretry.attempt;

import static io.github.grpcretry.testing.ScriptedServer.Action;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.Engines.Engine;
import io.github.grpcretry.attempt.Engines.Transport;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * docs/design.md §0: every scenario runs under grpc-java's own retry engine and under the interceptor
 * engine, against the same real server, in-process and over Netty on loopback. Arrival counts,
 * {@code grpc-previous-rpc-attempts} values, the messages the server saw and the final status must
 * agree, except in the rows docs/design.md names as deliberate differences, which are asserted here
 * explicitly for both engines.
 *
 * <p>A scenario ends when every attempt the client opened has reached the server and ended there
 * ({@link AttemptStreams#settle}), not after a fixed sleep. A time bound is exact (a retry cannot
 * reach the server before its pushback has passed since the server stamped the failed attempt, nor a
 * call end before its deadline) or the order of two configured times at least {@link #MARGIN_MS}
 * apart.
 */
class SideBySideTest {

    /** The least distance between two configured times whose order a test relies on. */
    private static final long MARGIN_MS = 1_000;
    private static final long MS = 1_000_000L;

    @RegisterExtension
    static final SideBySideServers SERVERS = new SideBySideServers("side-by-side");

    /**
     * What one engine did in one scenario: {@code gapsNanos} between consecutive arrivals as the server
     * stamped them (before answering), {@code closedNanos} from the start of the scenario (before its
     * first call) to each call's close.
     */
    record Observed(int arrivals, List<Integer> previousAttempts, List<List<String>> serverMessages,
            List<Status.Code> codes, List<List<String>> responses, List<Long> elapsedMillis, List<Long> gapsNanos,
            List<Long> closedNanos) {

        /**
         * The part both engines must agree on. The messages an attempt delivered before the server
         * failed it at once are a race in either engine, so scenarios compare them explicitly where
         * the server reads everything first.
         */
        Object comparable() {
            return List.of(arrivals, previousAttempts, codes, responses);
        }
    }

    interface Drive {
        List<Rpc.Outcome> run(Channel channel) throws Exception;
    }

    private static ScriptedServer server(Transport t) {
        return SERVERS.server(t);
    }

    /** The scenario in progress (the tests of this class run one at a time), for drives that wait on it. */
    private static volatile AttemptStreams currentStreams;
    /** Backoffs scheduled in the scenario in progress: the engine's events, or grpc-java's timers. */
    private static volatile java.util.function.IntSupplier currentBackoffs;
    /** The backoff of {@link #cancellationDuringBackoff}: 5 s x U(0.8, 1.2), the range grpc-java's timers count. */
    private static final long LONG_BACKOFF_MS = 5_000;

    private static Observed run(Engine engine, Transport transport, ChannelRetryConfig config,
            Function<Arrival, Action> script, Drive drive) throws Exception {
        ScriptedServer server = server(transport);
        try (NativeTimers timers = new NativeTimers(LONG_BACKOFF_MS * 8 / 10 * MS, LONG_BACKOFF_MS * 12 / 10 * MS);
                Engines.Client client = engine == Engine.NATIVE ? Engines.nativeClient(server, transport, config, timers)
                        : Engines.interceptorClient(server, transport, config, SERVERS.scheduler())) {
            currentBackoffs = engine == Engine.NATIVE ? timers::scheduled
                    : () -> client.events().ofType("retryScheduled").size();
            // warm up: a connected transport, so no attempt waits in a delayed stream
            server.script(a -> Action.ok());
            Rpc.unary(client.channel(), GrpcRetryCallOptions.withoutRetries(CallOptions.DEFAULT), "warm-up");
            server.reset();
            server.script(script);
            AttemptStreams streams = new AttemptStreams();
            currentStreams = streams;
            long start = System.nanoTime();
            List<Rpc.Outcome> outcomes = drive.run(ClientInterceptors.intercept(client.channel(), streams.interceptor()));
            // every attempt opened has reached the server and ended there: no stray attempt is in transit
            streams.settle(server, a -> true);
            List<Arrival> arrivals = server.arrivals();
            List<Integer> prev = new ArrayList<>();
            List<List<String>> seen = new ArrayList<>();
            List<Long> gaps = new ArrayList<>();
            for (int i = 0; i < arrivals.size(); i++) {
                prev.add(arrivals.get(i).previousAttempts);
                seen.add(List.copyOf(arrivals.get(i).messages));
                if (i > 0) {
                    gaps.add(arrivals.get(i).nanoTime - arrivals.get(i - 1).nanoTime);
                }
            }
            List<Status.Code> codes = new ArrayList<>();
            List<List<String>> responses = new ArrayList<>();
            List<Long> elapsed = new ArrayList<>();
            List<Long> closed = new ArrayList<>();
            for (Rpc.Outcome o : outcomes) {
                codes.add(o.code());
                responses.add(o.responses());
                elapsed.add(o.elapsedMillis());
                closed.add(o.listener().closedAtNanos() - start);
            }
            if (client.interceptor() != null) {
                assertThat(EngineTestAccess.bufferPool(client.interceptor()).used()).as("bytes held after the scenario").isZero();
            }
            return new Observed(arrivals.size(), prev, seen, codes, responses, elapsed, gaps, closed);
        } finally {
            currentStreams = null;
            currentBackoffs = null;
        }
    }

    /** Runs under both engines and asserts they agree; returns the interceptor's observation. */
    private static Observed same(Transport t, ChannelRetryConfig config, Function<Arrival, Action> script, Drive drive)
            throws Exception {
        return same(t, config, script, drive, false);
    }

    /** As above; with {@code compareMessages} the messages each arrival received must agree too. */
    private static Observed same(Transport t, ChannelRetryConfig config, Function<Arrival, Action> script, Drive drive,
            boolean compareMessages) throws Exception {
        Observed nat = run(Engine.NATIVE, t, config, script, drive);
        Observed ours = run(Engine.INTERCEPTOR, t, config, script, drive);
        assertThat(ours.comparable()).as("interceptor engine vs grpc-java's (native %s)", nat).isEqualTo(nat.comparable());
        if (compareMessages) {
            assertThat(ours.serverMessages()).as("messages per arrival").isEqualTo(nat.serverMessages());
        }
        return ours;
    }

    private static Drive unary(CallOptions options) {
        return ch -> List.of(Rpc.unary(ch, options, "req"));
    }

    private static Drive unaryWithDeadline(long millis) {
        return ch -> List.of(Rpc.unary(ch, CallOptions.DEFAULT.withDeadlineAfter(millis, TimeUnit.MILLISECONDS), "req"));
    }

    private static final Drive UNARY = unary(CallOptions.DEFAULT);

    // ---------------------------------------------------------------- codes and attempts

    @ParameterizedTest
    @EnumSource(Transport.class)
    void retryableCodeIsRetriedUntilSuccess(Transport t) throws Exception {
        Observed o = same(t, Configs.channel(Configs.fast(3)), ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE), UNARY);
        assertThat(o.arrivals()).isEqualTo(3);
        assertThat(o.previousAttempts()).containsExactly(null, 1, 2);
        assertThat(o.codes()).containsExactly(Status.Code.OK);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void nonRetryableCodeIsNotRetried(Transport t) throws Exception {
        Observed o = same(t, Configs.channel(Configs.fast(3)), ScriptedServer.always(Status.Code.INTERNAL), UNARY);
        assertThat(o.arrivals()).isEqualTo(1);
        assertThat(o.codes()).containsExactly(Status.Code.INTERNAL);
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4, 5, 6, 7, 8, 9, 10})
    void maxAttemptsIsCappedAtFive(int maxAttempts) throws Exception {
        RetryPolicy p = Configs.policy(maxAttempts, 2, 10, 2, Status.Code.UNAVAILABLE);
        Observed o = same(Transport.IN_PROCESS, Configs.channel(p), ScriptedServer.always(Status.Code.UNAVAILABLE), UNARY);
        assertThat(o.arrivals()).isEqualTo(Math.min(maxAttempts, 5));
        assertThat(o.codes()).containsExactly(Status.Code.UNAVAILABLE);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void maxAttemptsTenOverNetty(Transport t) throws Exception {
        Observed o = same(t, Configs.channel(Configs.policy(10, 2, 10, 2, Status.Code.UNAVAILABLE)),
                ScriptedServer.always(Status.Code.UNAVAILABLE), UNARY);
        assertThat(o.previousAttempts()).containsExactly(null, 1, 2, 3, 4);
    }

    // ---------------------------------------------------------------- pushback

    @ParameterizedTest
    @EnumSource(Transport.class)
    void pushback300(Transport t) throws Exception {
        Observed o = same(t, Configs.channel(Configs.fast(3)),
                a -> a.index == 1 ? Action.fail(Status.Code.UNAVAILABLE).pushback("300") : Action.ok(), UNARY);
        assertThat(o.arrivals()).isEqualTo(2);
        assertThat(o.codes()).containsExactly(Status.Code.OK);
        // the server stamped the failed attempt before answering, so the retry cannot come sooner than
        // the pushback; later only by the load
        assertThat(o.gapsNanos().get(0)).isBetween(300 * MS, (300 + MARGIN_MS) * MS);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void pushbackNegativeStops(Transport t) throws Exception {
        Observed o = same(t, Configs.channel(Configs.fast(3)),
                a -> Action.fail(Status.Code.UNAVAILABLE).pushback("-1"), UNARY);
        assertThat(o.arrivals()).isEqualTo(1);
        assertThat(o.codes()).containsExactly(Status.Code.UNAVAILABLE);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void pushbackJunkStops(Transport t) throws Exception {
        Observed o = same(t, Configs.channel(Configs.fast(3)),
                a -> Action.fail(Status.Code.UNAVAILABLE).pushback("soon"), UNARY);
        assertThat(o.arrivals()).isEqualTo(1);
        Observed overflow = same(t, Configs.channel(Configs.fast(3)),
                a -> Action.fail(Status.Code.UNAVAILABLE).pushback("2147483648"), UNARY);
        assertThat(overflow.arrivals()).isEqualTo(1);
    }

    /**
     * Several pushback values: we (like grpc-go) do not retry; grpc-java reads only the last value
     * and retries after it. A deliberate difference (docs/design.md §3: "several values: no retry").
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void pushbackTwoValuesIsADeliberateDifference(Transport t) throws Exception {
        ChannelRetryConfig config = Configs.channel(Configs.fast(3));
        Function<Arrival, Action> script =
                a -> a.index == 1 ? Action.fail(Status.Code.UNAVAILABLE).pushback("50", "60") : Action.ok();
        Observed nat = run(Engine.NATIVE, t, config, script, UNARY);
        Observed ours = run(Engine.INTERCEPTOR, t, config, script, UNARY);
        assertThat(nat.arrivals()).isEqualTo(2);
        assertThat(nat.codes()).containsExactly(Status.Code.OK);
        assertThat(ours.arrivals()).isEqualTo(1);
        assertThat(ours.codes()).containsExactly(Status.Code.UNAVAILABLE);
    }

    /**
     * Pushback >= 0 on a status that is not retryable: grpc-java retries, we (like grpc-go) do not
     * (docs/design.md §3, deliberate difference).
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void pushbackOnNonRetryableStatusIsADeliberateDifference(Transport t) throws Exception {
        ChannelRetryConfig config = Configs.channel(Configs.fast(3));
        Function<Arrival, Action> script =
                a -> a.index == 1 ? Action.fail(Status.Code.INTERNAL).pushback("20") : Action.ok();
        Observed nat = run(Engine.NATIVE, t, config, script, UNARY);
        Observed ours = run(Engine.INTERCEPTOR, t, config, script, UNARY);
        assertThat(nat.arrivals()).isEqualTo(2);
        assertThat(nat.codes()).containsExactly(Status.Code.OK);
        assertThat(ours.arrivals()).isEqualTo(1);
        assertThat(ours.codes()).containsExactly(Status.Code.INTERNAL);
    }

    // ---------------------------------------------------------------- commitment

    @ParameterizedTest
    @EnumSource(Transport.class)
    void headersBeforeFailureCommit(Transport t) throws Exception {
        Observed o = same(t, Configs.channel(Configs.fast(3)),
                a -> Action.fail(Status.Code.UNAVAILABLE).headersFirst(), UNARY);
        assertThat(o.arrivals()).isEqualTo(1);
        assertThat(o.codes()).containsExactly(Status.Code.UNAVAILABLE);
    }

    /**
     * Both engines count what the transport reports written (in-process: with the size-tracing flag this module's
     * tests run with, docs/design.md §2).
     */
    @ParameterizedTest
    @CsvSource({"NETTY,102400", "NETTY,1024", "IN_PROCESS,102400", "IN_PROCESS,1024"})
    void requestOverPerRpcLimitIsNotRetried(Transport t, int size) throws Exception {
        ChannelRetryConfig config = Configs.channel(Configs.service(Configs.fast(3), null), 64 * 1024, 1 << 20, null);
        Observed o = same(t, config, a -> Action.failOnHalfClose(Status.Code.UNAVAILABLE),
                ch -> List.of(Rpc.start(ch, Rpc.UNARY, CallOptions.DEFAULT).sendBytes(size).halfClose().await()));
        assertThat(o.arrivals()).isEqualTo(size > 64 * 1024 ? 1 : 3);
    }

    /**
     * Three client streams hold 200 KiB each at once against a 300 KiB channel buffer: the first fits
     * and is retried, the other two are committed (one attempt each).
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void channelWideBufferLimitWithConcurrentCalls(Transport t) throws Exception {
        ChannelRetryConfig config = Configs.channel(Configs.service(Configs.fast(3), null), 1 << 20, 300 * 1024, null);
        Drive drive = ch -> {
            List<Rpc.Handle> handles = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                handles.add(Rpc.start(ch, Rpc.CLIENT_STREAMING, CallOptions.DEFAULT).sendBytes(200 * 1024));
            }
            // every stream holds its message: the server has it, so the client has written (and counted) it
            ScriptedServer server = server(t);
            RetryEngineTest.waitFor(() -> server.arrivalCount() == 3
                    && server.arrivals().stream().allMatch(a -> a.messages.size() == 1));
            List<Rpc.Outcome> out = new ArrayList<>();
            for (Rpc.Handle h : handles) {
                h.halfClose();
                out.add(h.await());
            }
            return out;
        };
        Function<Arrival, Action> script = a -> a.previousAttempts == null
                ? Action.failOnHalfClose(Status.Code.UNAVAILABLE) : Action.ok();
        Observed o = same(t, config, script, drive);
        assertThat(o.arrivals()).isEqualTo(4);
        assertThat(o.codes()).containsExactly(Status.Code.OK, Status.Code.UNAVAILABLE, Status.Code.UNAVAILABLE);
    }

    // ---------------------------------------------------------------- streaming

    @ParameterizedTest
    @EnumSource(Transport.class)
    void clientStreamReplayedAfterFailure(Transport t) throws Exception {
        Observed o = same(t, Configs.channel(Configs.fast(3)),
                a -> a.index <= 2 ? Action.failOnHalfClose(Status.Code.UNAVAILABLE) : Action.ok(),
                ch -> List.of(Rpc.clientStreaming(ch, CallOptions.DEFAULT, "a", "b", "c", "d")), true);
        assertThat(o.arrivals()).isEqualTo(3);
        assertThat(o.serverMessages()).allSatisfy(m -> assertThat(m).containsExactly("a", "b", "c", "d"));
        assertThat(o.responses()).containsExactly(List.of("a,b,c,d"));
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void serverStreamFailingBeforeFirstMessage(Transport t) throws Exception {
        Observed o = same(t, Configs.channel(Configs.fast(3)),
                a -> a.index == 1 ? Action.fail(Status.Code.UNAVAILABLE) : Action.ok().responses(3),
                ch -> List.of(Rpc.serverStreaming(ch, CallOptions.DEFAULT, "s")));
        assertThat(o.arrivals()).isEqualTo(2);
        assertThat(o.responses()).containsExactly(List.of("r0", "r1", "r2"));
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void serverStreamFailingAfterFirstMessage(Transport t) throws Exception {
        Observed o = same(t, Configs.channel(Configs.fast(3)),
                a -> Action.ok().responses(1).thenFail(Status.Code.UNAVAILABLE),
                ch -> List.of(Rpc.serverStreaming(ch, CallOptions.DEFAULT, "s")));
        assertThat(o.arrivals()).isEqualTo(1);
        assertThat(o.codes()).containsExactly(Status.Code.UNAVAILABLE);
        assertThat(o.responses()).containsExactly(List.of("r0"));
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void bidiRetriedAndReplayed(Transport t) throws Exception {
        Observed o = same(t, Configs.channel(Configs.fast(3)),
                a -> a.index == 1 ? Action.failOnHalfClose(Status.Code.UNAVAILABLE) : Action.ok(),
                ch -> List.of(Rpc.bidi(ch, CallOptions.DEFAULT, "x", "y")), true);
        assertThat(o.arrivals()).isEqualTo(2);
        assertThat(o.responses()).containsExactly(List.of("x", "y"));
    }

    // ---------------------------------------------------------------- deadline and cancellation

    /**
     * The next backoff would end after the call's deadline: grpc-java waits and fails with
     * DEADLINE_EXCEEDED at the deadline; we end at once with the last attempt's status (docs/design.md §4).
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void deadlineShorterThanBackoffIsADeliberateDifference(Transport t) throws Exception {
        ChannelRetryConfig config = Configs.channel(Configs.policy(5, 200, 60_000, 40, Status.Code.UNAVAILABLE));
        // attempt 2 starts within 160-240 ms; the next backoff is 6.4-9.6 s, past the 2 s deadline
        long deadline = 2_000;
        Drive drive = unaryWithDeadline(deadline);
        Observed nat = run(Engine.NATIVE, t, config, ScriptedServer.always(Status.Code.UNAVAILABLE), drive);
        Observed ours = run(Engine.INTERCEPTOR, t, config, ScriptedServer.always(Status.Code.UNAVAILABLE), drive);
        assertThat(nat.arrivals()).isEqualTo(2);
        assertThat(ours.arrivals()).isEqualTo(2);
        assertThat(nat.codes()).containsExactly(Status.Code.DEADLINE_EXCEEDED);
        assertThat(ours.codes()).containsExactly(Status.Code.UNAVAILABLE);
        // the deadline was set after the scenario started: grpc-java's close cannot come before it
        assertThat(nat.closedNanos().get(0)).as("grpc-java waits for the deadline").isGreaterThanOrEqualTo(deadline * MS);
        assertThat(ours.closedNanos().get(0)).as("ours ends at once, a second before the deadline")
                .isLessThan((deadline - MARGIN_MS) * MS);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void cancellationDuringBackoff(Transport t) throws Exception {
        // a backoff of 4-6 s: the cancel comes while it runs, however slow the machine
        ChannelRetryConfig config = Configs.channel(Configs.policy(3, LONG_BACKOFF_MS, LONG_BACKOFF_MS, 1,
                Status.Code.UNAVAILABLE));
        Observed o = same(t, config, ScriptedServer.always(Status.Code.UNAVAILABLE), ch -> {
            Rpc.Handle h = Rpc.start(ch, Rpc.UNARY, CallOptions.DEFAULT).send("a").halfClose();
            // the first attempt has failed and its backoff is scheduled (grpc-java's timer, our event)
            java.util.function.IntSupplier backoffs = currentBackoffs;
            RetryEngineTest.waitFor(() -> backoffs.getAsInt() == 1);
            h.call.cancel("enough", null);
            Rpc.Outcome out = h.await(10, TimeUnit.SECONDS);
            assertThat(out.elapsedMillis()).as("ended at the cancel, not after the backoff (at least 4 s)")
                    .isLessThan(4000 - MARGIN_MS);
            return List.of(out);
        });
        assertThat(o.arrivals()).isEqualTo(1);
        assertThat(o.codes()).containsExactly(Status.Code.CANCELLED);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void cancellationDuringAnAttempt(Transport t) throws Exception {
        ChannelRetryConfig config = Configs.channel(Configs.fast(3));
        ScriptedServer server = server(t);
        Observed o = same(t, config, a -> Action.ok().delay(10_000), ch -> { // never answered: cancelled first
            Rpc.Handle h = Rpc.start(ch, Rpc.UNARY, CallOptions.DEFAULT).send("a").halfClose();
            RetryEngineTest.waitFor(() -> server.arrivalCount() == 1);
            h.call.cancel("enough", null);
            Rpc.Outcome out = h.await(2, TimeUnit.SECONDS);
            RetryEngineTest.waitFor(() -> server.arrivals().get(0).cancelled);
            return List.of(out);
        });
        assertThat(o.arrivals()).isEqualTo(1);
        assertThat(o.codes()).containsExactly(Status.Code.CANCELLED);
    }
}
