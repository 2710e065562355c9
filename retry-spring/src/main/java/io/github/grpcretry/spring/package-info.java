/**
 * The Spring glue both Spring Boot lines share, written once on the Spring Boot API that 3.5 and 4.1 have
 * alike ({@code Binder}, {@code ConfigurationPropertyName}, {@code Origin}, {@code FailureAnalyzer},
 * {@code @Endpoint}/{@code @ReadOperation}, conditions): the composed condition
 * {@link io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled}, the status-code binding, the start-up
 * failure analyzers, the {@code grpcretry} endpoint, the keys of the unknown-key check, the bound values
 * of {@code DataSize} and {@code Resource}, and the configurations of the beans both lines declare alike
 * (event listeners and meters). Nothing here names a type that moved in Spring Boot 4 (health,
 * metrics auto-configuration).
 *
 * <p><b>Integration SPI</b>: for the auto-configuration modules of the Spring Boot lines, not for
 * application code; counted apart from the user API in docs/api.md.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.spring;

import org.jspecify.annotations.NullMarked;
