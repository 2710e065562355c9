/**
 * What the endpoint and the health indicators show: the report of every channel's configuration,
 * limiters and state ({@link io.github.grpcretry.spring.report.RetryReport}), the statistics it reads
 * and the channel states a Boot line supplies. Uses {@code reload} and {@code channel}.
 *
 * <p><b>Integration SPI</b>: for the auto-configuration modules of the Spring Boot lines, not for
 * application code; counted apart from the user API in docs/api.md.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.spring.report;

import org.jspecify.annotations.NullMarked;
