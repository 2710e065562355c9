package io.github.grpcretry.autoconfigure;

import io.github.grpcretry.autoconfigure.GrpcRetryProperties.ClientProperties;
import io.github.grpcretry.autoconfigure.GrpcRetryProperties.HedgingProperties;
import io.github.grpcretry.autoconfigure.GrpcRetryProperties.MethodProperties;
import io.github.grpcretry.autoconfigure.GrpcRetryProperties.NameProperties;
import io.github.grpcretry.autoconfigure.GrpcRetryProperties.RetryProperties;
import io.github.grpcretry.autoconfigure.GrpcRetryProperties.RetryThrottlingProperties;
import io.github.grpcretry.internal.config.ChannelDraft;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.internal.config.ConfigNaming;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.internal.config.HedgingPolicyDraft;
import io.github.grpcretry.internal.config.MethodConfigDraft;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.internal.config.ResolvedChannelRetryConfigs;
import io.github.grpcretry.internal.config.RetryPolicyDraft;
import io.github.grpcretry.internal.config.RetryThrottlingDraft;
import io.github.grpcretry.policy.ServiceConfigCustomizer;
import io.github.grpcretry.internal.config.ServiceConfigDraft;
import io.github.grpcretry.internal.config.ServiceConfigJson;
import io.github.grpcretry.internal.config.Sourced;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.FileSystemResource;
import org.springframework.core.io.Resource;
import org.springframework.util.unit.DataSize;

/**
 * Turns the bound {@link GrpcRetryProperties} (and the service-config files they name) into the
 * validated {@link ResolvedChannelRetryConfigs}; every problem is named by its full property path.
 */
public final class GrpcRetryConfigResolver {

    public static final String PREFIX = "grpc.retry.clients.";

    private GrpcRetryConfigResolver() {
    }

    /**
     * @throws io.github.grpcretry.policy.InvalidRetryConfigurationException listing every problem
     */
    public static ResolvedChannelRetryConfigs resolve(GrpcRetryProperties properties, List<ServiceConfigCustomizer> customizers,
            Consumer<String> warnings) {
        List<ConfigProblem> problems = new ArrayList<>();
        Map<String, ChannelDraft> drafts = new LinkedHashMap<>();
        for (Map.Entry<String, ClientProperties> e : properties.getClients().entrySet()) {
            String key = e.getKey();
            String channel = ChannelRetryConfigs.GLOBAL.equalsIgnoreCase(key) ? ChannelRetryConfigs.GLOBAL : key;
            ClientProperties client = e.getValue() == null ? new ClientProperties() : e.getValue();
            drafts.put(channel, channelDraft(channel, PREFIX + key, client, problems));
        }
        return ResolvedChannelRetryConfigs.resolve(drafts, customizers, problems, warnings);
    }

    static ChannelDraft channelDraft(String channel, String path, ClientProperties c, List<ConfigProblem> problems) {
        ServiceConfigDraft typed = serviceConfig(path + ".service-config", c.getServiceConfig());
        ServiceConfigDraft file = null;
        if (c.getServiceConfigFile() != null) {
            file = readFile(c.getServiceConfigFile(), path + ".service-config-file", problems);
        }
        ServiceConfigDraft merged = typed.overlay(file);
        GrpcRetryProperties.Budget b = c.getBudget() == null ? new GrpcRetryProperties.Budget() : c.getBudget();
        String bp = path + ".budget";
        return new ChannelDraft(channel, path, merged,
                Sourced.of(b.getRatio(), bp + ".ratio"),
                Sourced.of(b.getMinRetriesPerSecond(), bp + ".min-retries-per-second"),
                Sourced.of(b.getTtl(), bp + ".ttl"),
                Sourced.of(c.getMaxAttemptsCap(), path + ".max-attempts-cap"),
                bytes(c.getPerRpcBufferLimit(), path + ".per-rpc-buffer-limit"),
                bytes(c.getRetryBufferSize(), path + ".retry-buffer-size"),
                Sourced.of(c.getConnectTimeout(), path + ".connect-timeout"),
                Sourced.of(c.getResilience4jRetry(), path + ".resilience4j-retry"));
    }

    private static ServiceConfigDraft serviceConfig(String path, GrpcRetryProperties.ServiceConfigProperties sc) {
        if (sc == null) {
            return ServiceConfigDraft.EMPTY;
        }
        List<MethodConfigDraft> methods = new ArrayList<>();
        List<MethodProperties> list = sc.getMethod() == null ? List.of() : sc.getMethod();
        for (int i = 0; i < list.size(); i++) {
            MethodProperties m = list.get(i);
            if (m != null) {
                methods.add(method(path + ".method[" + i + "]", m));
            }
        }
        RetryThrottlingDraft throttling = null;
        RetryThrottlingProperties t = sc.getRetrythrottling();
        if (t != null) {
            String tp = path + ".retrythrottling";
            throttling = new RetryThrottlingDraft(tp, ConfigNaming.PROPERTIES, Sourced.of(t.getMaxTokens(), tp + ".max-tokens"),
                    Sourced.of(t.getTokenRatio(), tp + ".token-ratio"));
        }
        return new ServiceConfigDraft(methods, throttling);
    }

    private static MethodConfigDraft method(String path, MethodProperties m) {
        List<Sourced<MethodName>> names = new ArrayList<>();
        List<NameProperties> given = m.getName() == null ? List.of() : m.getName();
        for (int j = 0; j < given.size(); j++) {
            NameProperties n = given.get(j);
            MethodName name = n == null ? MethodName.DEFAULT : new MethodName(n.getService(), n.getMethod());
            names.add(new Sourced<>(name, path + ".name[" + j + "]", name.toString()));
        }
        if (names.isEmpty()) {
            // An entry without names applies to every method of the channel (gRPC's "name": [{}]).
            names.add(new Sourced<>(MethodName.DEFAULT, path + ".name", MethodName.DEFAULT.toString()));
        }
        RetryPolicyDraft retry = null;
        RetryProperties r = m.getRetry();
        if (r != null) {
            String rp = path + ".retry";
            retry = new RetryPolicyDraft(rp, ConfigNaming.PROPERTIES,
                    Sourced.of(r.getMaxAttempts(), rp + ".max-attempts"),
                    Sourced.of(r.getInitialBackoff(), rp + ".initial-backoff"),
                    Sourced.of(r.getMaxBackoff(), rp + ".max-backoff"),
                    Sourced.of(r.getBackoffMultiplier(), rp + ".backoff-multiplier"),
                    codes(r.getRetryableStatusCodes(), rp + ".retryable-status-codes"),
                    Sourced.of(r.getPerAttemptReceiveTimeout(), rp + ".per-attempt-receive-timeout"));
        }
        HedgingPolicyDraft hedging = null;
        HedgingProperties h = m.getHedging();
        if (h != null) {
            String hp = path + ".hedging";
            hedging = new HedgingPolicyDraft(hp, ConfigNaming.PROPERTIES,
                    Sourced.of(h.getMaxAttempts(), hp + ".max-attempts"),
                    Sourced.of(h.getDelay(), hp + ".delay"),
                    codes(h.getNonFatalStatusCodes(), hp + ".non-fatal-status-codes"));
        }
        return new MethodConfigDraft(path, ConfigNaming.PROPERTIES, names,
                Sourced.of(m.getWaitForReady(), path + ".wait-for-ready"),
                Sourced.of(m.getTimeout(), path + ".timeout"),
                bytes(m.getMaxRequestMessage(), path + ".max-request-message"),
                bytes(m.getMaxResponseMessage(), path + ".max-response-message"),
                retry, hedging);
    }

    private static Sourced<List<String>> codes(List<String> codes, String path) {
        return codes == null ? null : new Sourced<>(List.copyOf(codes), path, codes.toString());
    }

    private static Sourced<Long> bytes(DataSize size, String path) {
        return size == null ? null : new Sourced<>(size.toBytes(), path, size.toString());
    }

    private static ServiceConfigDraft readFile(Resource resource, String propertyPath, List<ConfigProblem> problems) {
        String name = describe(resource);
        if (!resource.exists()) {
            problems.add(new ConfigProblem(propertyPath, name, "the service config file does not exist",
                    "point it to an existing file, e.g. classpath:service-config.json or file:/etc/app/service-config.json"));
            return null;
        }
        String text;
        try (InputStream in = resource.getInputStream()) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            problems.add(new ConfigProblem(propertyPath, name, "the service config file cannot be read: " + e.getMessage(),
                    "make the file readable by the application"));
            return null;
        }
        return ServiceConfigJson.parse(text, name, problems);
    }

    /** How a file is named in problems: {@code classpath:sc.json}, {@code file:/x/sc.json}, else Spring's description. */
    static String describe(Resource resource) {
        if (resource instanceof ClassPathResource cp) {
            return "classpath:" + cp.getPath();
        }
        if (resource instanceof FileSystemResource fs) {
            return "file:" + fs.getPath();
        }
        try {
            if (resource.isFile()) {
                return "file:" + resource.getFile().getPath();
            }
            return resource.getURL().toString();
        } catch (IOException | RuntimeException e) {
            return resource.getDescription();
        }
    }
}
