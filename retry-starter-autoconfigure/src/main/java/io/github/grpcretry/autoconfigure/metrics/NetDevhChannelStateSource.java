package io.github.grpcretry.autoconfigure.metrics;

import io.github.grpcretry.spring.report.ChannelStateSource;
import io.grpc.ConnectivityState;
import java.net.URI;
import java.util.HashMap;
import java.util.Map;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import net.devh.boot.grpc.client.config.GrpcChannelProperties;
import net.devh.boot.grpc.client.config.GrpcChannelsProperties;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The connectivity states net.devh's {@link GrpcChannelFactory} reports, keyed by client name.
 * net.devh keys an {@code in-process:<name>} channel by the in-process name rather than the client
 * name; those keys are mapped back to the client names from {@link GrpcChannelsProperties}.
 */
public class NetDevhChannelStateSource implements ChannelStateSource {

    private final ObjectProvider<GrpcChannelFactory> factories;
    private final ObjectProvider<GrpcChannelsProperties> properties;

    public NetDevhChannelStateSource(ObjectProvider<GrpcChannelFactory> factories,
            ObjectProvider<GrpcChannelsProperties> properties) {
        this.factories = factories;
        this.properties = properties;
    }

    @Override
    public Map<String, ConnectivityState> states() {
        GrpcChannelFactory factory = factories.getIfUnique();
        if (factory == null) {
            return Map.of();
        }
        Map<String, ConnectivityState> raw;
        try {
            raw = factory.getConnectivityState();
        } catch (RuntimeException e) {
            return Map.of();
        }
        GrpcChannelsProperties props = properties.getIfUnique();
        if (raw.isEmpty() || props == null) {
            return raw;
        }
        Map<String, ConnectivityState> out = new HashMap<>(raw);
        for (String client : props.getClient().keySet()) {
            if (GrpcChannelsProperties.GLOBAL_PROPERTIES_KEY.equals(client) || raw.containsKey(client)) {
                continue;
            }
            GrpcChannelProperties channel = props.getChannel(client);
            URI address = channel == null ? null : channel.getAddress();
            if (address != null && "in-process".equals(address.getScheme())) {
                String inProcessName = address.getSchemeSpecificPart();
                ConnectivityState state = raw.get(inProcessName);
                if (state != null) {
                    out.remove(inProcessName);
                    out.put(client, state);
                }
            }
        }
        return out;
    }
}
