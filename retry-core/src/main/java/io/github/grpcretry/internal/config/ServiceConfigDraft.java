package io.github.grpcretry.internal.config;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** A service config as configured (from a JSON file or typed properties), not yet validated. */
public record ServiceConfigDraft(List<MethodConfigDraft> methodConfigs, @Nullable RetryThrottlingDraft retryThrottling) {

    public static final ServiceConfigDraft EMPTY = new ServiceConfigDraft(List.of(), null);

    public ServiceConfigDraft {
        methodConfigs = List.copyOf(methodConfigs);
    }

    /**
     * This (typed) config laid over {@code file}: an entry of this config with the same set of names
     * as an entry of {@code file} overlays that entry field by field (in the file entry's place);
     * other entries of this config are added after the file's. Throttling fields overlay field by field.
     */
    public ServiceConfigDraft overlay(@Nullable ServiceConfigDraft file) {
        if (file == null) {
            return this;
        }
        List<MethodConfigDraft> own = new ArrayList<>(methodConfigs);
        List<MethodConfigDraft> merged = new ArrayList<>();
        for (MethodConfigDraft under : file.methodConfigs) {
            MethodConfigDraft result = under;
            for (Iterator<MethodConfigDraft> it = own.iterator(); it.hasNext(); ) {
                MethodConfigDraft over = it.next();
                if (over.nameSet().equals(under.nameSet())) {
                    result = over.overlay(under);
                    it.remove();
                    break;
                }
            }
            merged.add(result);
        }
        merged.addAll(own);
        RetryThrottlingDraft t = retryThrottling == null ? file.retryThrottling
                : retryThrottling.overlay(file.retryThrottling);
        return new ServiceConfigDraft(merged, t);
    }
}
