package io.github.grpcretry.spring;

import io.github.grpcretry.integration.RetryConfigResolver;
import java.io.IOException;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.FileSystemResource;
import org.springframework.core.io.Resource;
import org.springframework.util.unit.DataSize;

/**
 * Spring's {@link DataSize} and {@link Resource}, as both lines bind them, for the configuration
 * resolver's mapping of the bound properties ({@link RetryConfigResolver.ClientProperties#fromBound}).
 */
public final class SpringBoundValues {

    /** The sizes and service-config files of the bound properties. */
    public static final RetryConfigResolver.BoundValues BOUND_VALUES = new RetryConfigResolver.BoundValues() {
        @Override
        public RetryConfigResolver.Size size(Object value) {
            DataSize size = (DataSize) value;
            return new RetryConfigResolver.Size(size.toBytes(), size.toString());
        }

        @Override
        public RetryConfigResolver.ServiceConfigFile file(Object value) {
            Resource resource = (Resource) value;
            return RetryConfigResolver.ServiceConfigFile.read(describe(resource), resource.exists(), resource::getInputStream);
        }
    };

    private SpringBoundValues() {
    }

    /** The bound properties of one channel (either line's client properties type). */
    public static RetryConfigResolver.ClientProperties client(Object boundClient) {
        return RetryConfigResolver.ClientProperties.fromBound(boundClient, BOUND_VALUES);
    }

    /** How a file is named in problems: {@code classpath:sc.json}, {@code file:/x/sc.json}, else Spring's description. */
    public static String describe(Resource resource) {
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
