package io.github.grpcretry.observation;

import io.github.grpcretry.attempt.AttemptKind;
import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.attempt.DelaySource;
import io.grpc.Metadata;
import io.grpc.Status;
import io.micrometer.observation.transport.RequestReplySenderContext;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The context of one attempt's observation ({@code grpc.client.attempt}): a sender context whose carrier
 * is the attempt's own request headers, so a propagating tracing handler writes the attempt's trace
 * context into them when the observation starts. A key the propagator writes replaces any value of that
 * key the headers had (the call's own, copied from the call's headers), so a server sees the attempt as
 * its parent, not the call.
 */
public final class AttemptObservationContext extends RequestReplySenderContext<Metadata, Object> {

    private final CallTarget target;
    private final AttemptKind kind;
    private final int attemptNumber;
    private final long delayNanos;
    private final @Nullable DelaySource delaySource;
    private Status.@Nullable Code statusCode;
    private @Nullable String pushback;
    private boolean committed;
    private boolean cancelled;
    private volatile int transparentRetries;
    private volatile @Nullable String peerAddress;
    private volatile int peerPort = -1;

    AttemptObservationContext(CallTarget target, AttemptKind kind, int attemptNumber, long delayNanos,
            @Nullable DelaySource delaySource, Metadata headers) {
        super(AttemptObservationContext::put);
        this.target = target;
        this.kind = kind;
        this.attemptNumber = attemptNumber;
        this.delayNanos = delayNanos;
        this.delaySource = delaySource;
        setCarrier(headers);
    }

    /** Keys of the propagation fields seen so far (a propagator writes the same few: traceparent, ...). */
    private static final ConcurrentHashMap<String, Metadata.Key<String>> KEYS = new ConcurrentHashMap<>();

    /** Sets a propagation field: the value replaces the headers' own (copied from the call). */
    private static void put(@Nullable Metadata headers, String key, String value) {
        if (headers == null || key.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
            return;
        }
        Metadata.Key<String> k = KEYS.get(key);
        if (k == null) {
            k = Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER);
            if (KEYS.size() < 64) { // bounded, whatever a propagator does
                KEYS.putIfAbsent(key, k);
            }
        }
        headers.removeAll(k);
        headers.put(k, value);
    }

    /** Channel and method of the call. */
    public CallTarget getTarget() {
        return target;
    }

    /** Initial, retry or hedge. */
    public AttemptKind getAttemptKind() {
        return kind;
    }

    /** 1 for the first attempt. */
    public int getAttemptNumber() {
        return attemptNumber;
    }

    /** Attempts of the call before this one (gRFC A72's {@code previous-rpc-attempts}). */
    public int getPreviousAttempts() {
        return attemptNumber - 1;
    }

    /**
     * What the engine's timer waited before this attempt, in nanoseconds, measured: the backoff or the
     * server's pushback before a retry, the hedging delay before a hedge (0 for a hedge sent at once after a
     * failure); -1 for the first attempt.
     */
    public long getDelayNanos() {
        return delayNanos;
    }

    /** Where a retry's delay came from (the policy's backoff, the server's pushback or RetryInfo); null otherwise. */
    public @Nullable DelaySource getDelaySource() {
        return delaySource;
    }

    /** The attempt's status once it ended (CANCELLED for one the engine cancelled); null before. */
    public Status.@Nullable Code getStatusCode() {
        return statusCode;
    }

    /** The {@code grpc-retry-pushback-ms} trailer the attempt received, as sent; null when none. */
    public @Nullable String getPushback() {
        return pushback;
    }

    /** Whether the call's answer is this attempt's (its response was delivered to the application). */
    public boolean isCommitted() {
        return committed;
    }

    /** Whether the engine cancelled the attempt (a hedge that lost, a call that ended or was cancelled). */
    public boolean isCancelled() {
        return cancelled;
    }

    /**
     * Streams grpc-java sent again transparently under this attempt so far (a stream the server refused
     * before its application saw it); the attempt went on in the last one.
     */
    public int getTransparentRetries() {
        return transparentRetries;
    }

    /**
     * The address of the backend the attempt's stream reached (OpenTelemetry's {@code network.peer.address}: an IP
     * address, or the address as text for a non-IP one), or null before its stream has a transport.
     */
    public @Nullable String getPeerAddress() {
        return peerAddress;
    }

    /** The port of that backend ({@code network.peer.port}), or -1 (not known, or not an IP address). */
    public int getPeerPort() {
        return peerPort;
    }

    void peer(java.net.SocketAddress address) {
        if (address instanceof java.net.InetSocketAddress inet) {
            java.net.InetAddress ip = inet.getAddress();
            peerAddress = ip != null ? ip.getHostAddress() : inet.getHostString();
            peerPort = inet.getPort();
        } else {
            peerAddress = address.toString();
            peerPort = -1;
        }
    }

    synchronized void transparentRetry() {
        transparentRetries++;
    }

    void ended(Status.Code code, @Nullable String pushback, boolean committed, boolean cancelled) {
        this.statusCode = code;
        this.pushback = pushback;
        this.committed = committed;
        this.cancelled = cancelled;
    }
}
