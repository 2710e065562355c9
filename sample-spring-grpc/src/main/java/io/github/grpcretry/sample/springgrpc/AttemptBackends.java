package io.github.grpcretry.sample.springgrpc;

import io.github.grpcretry.observation.AttemptObservationContext;
import io.grpc.Status;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationView;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The attempts of each channel's last retried call and the backend each reached, for the showcase: fed by the
 * engine's per-attempt observations ({@code grpc.client.attempt}, children of Spring gRPC's call observation), one
 * line per channel such as {@code attempt 1 UNAVAILABLE :9090 | attempt 2 OK :9090}. The backend is shown by its
 * port ({@code network.peer.port}): the sample's channels have one backend, its own gRPC server.
 */
public class AttemptBackends implements ObservationHandler<AttemptObservationContext> {

    /** The attempts seen so far of each open call, by the call's observation. */
    private final Map<Observation.ContextView, List<String>> open = new ConcurrentHashMap<>();
    private final Map<String, String> lastRetried = new ConcurrentHashMap<>();

    @Override
    public boolean supportsContext(Observation.Context context) {
        return context instanceof AttemptObservationContext;
    }

    @Override
    public void onStop(AttemptObservationContext attempt) {
        ObservationView parent = attempt.getParentObservation();
        if (parent == null) {
            return;
        }
        Status.Code code = attempt.getStatusCode();
        String text = "attempt " + attempt.getAttemptNumber() + " " + (code == null ? "?" : code.name())
                + (attempt.getPeerPort() < 0 ? " :?" : " :" + attempt.getPeerPort());
        List<String> attempts = open.computeIfAbsent(parent.getContextView(), k -> new ArrayList<>());
        synchronized (attempts) {
            attempts.add(text);
            if (attempts.size() >= 2) {
                lastRetried.put(attempt.getTarget().channel(), String.join(" | ", attempts));
            }
        }
        if (attempt.isCommitted()) {
            open.remove(parent.getContextView()); // the call's outcome: a later (losing) attempt starts no new entry
        }
    }

    /** The attempts of {@code channel}'s last retried call, or null when none was retried. */
    public String lastRetried(String channel) {
        return lastRetried.get(channel);
    }
}
