package io.github.grpcretry.sample;

import io.github.grpcretry.sample.lab.FeedResumption;
import io.github.grpcretry.sample.lab.Lab;
import java.util.Arrays;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurationExcludeFilter;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.context.TypeExcludeFilter;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.FilterType;

/**
 * The sample application. Without arguments: demo mode (a flaky gRPC backend, a traffic generator
 * calling it through the starter, the dashboard at http://localhost:8080/). With {@code --lab}: lab
 * mode, which replays the reference experiments and prints their tables (see {@link Lab}).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@ComponentScan(excludeFilters = {
        @ComponentScan.Filter(type = FilterType.CUSTOM, classes = TypeExcludeFilter.class),
        @ComponentScan.Filter(type = FilterType.CUSTOM, classes = AutoConfigurationExcludeFilter.class),
        // the lab builds its own contexts; its applications and relay service are not part of the demo
        @ComponentScan.Filter(type = FilterType.REGEX, pattern = "io\\.github\\.grpcretry\\.sample\\.lab\\..*")})
public class SampleApplication {
    public static void main(String[] args) {
        if (Arrays.asList(args).contains("--lab")) {
            Lab.main(args);
            return;
        }
        SpringApplication.run(SampleApplication.class, args);
    }

    /**
     * Resumes a {@code Feed} stream that breaks after its first item, from the offset after the last one received
     * (the start-up showcase shows it); the starter gives it to every channel's engine.
     */
    @Bean
    FeedResumption feedResumption() {
        return new FeedResumption();
    }
}
