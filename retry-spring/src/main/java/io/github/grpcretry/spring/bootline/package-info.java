/**
 * The check that the starter runs on the Spring Boot line it was built for, and its failure. Uses
 * nothing of grpc-retry.
 *
 * <p><b>Integration SPI</b>: for the auto-configuration modules of the Spring Boot lines, not for
 * application code; counted apart from the user API in docs/api.md.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.spring.bootline;

import org.jspecify.annotations.NullMarked;
