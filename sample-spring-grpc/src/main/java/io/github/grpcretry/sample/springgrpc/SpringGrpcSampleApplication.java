package io.github.grpcretry.sample.springgrpc;

import io.github.grpcretry.sample.lab.FeedResumption;
import io.github.grpcretry.sample.server.ArrivalLog;
import io.github.grpcretry.sample.server.FaultScript;
import io.github.grpcretry.sample.springgrpc.lab.SpringGrpcLab;
import io.grpc.BindableService;
import java.util.Arrays;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * The Spring Boot 4.1 sample: a flaky {@code grpc.testing.SimpleService} on Spring gRPC's server and a
 * client of it over three Spring gRPC channels (no retry; retry through {@code grpc.retry.*}; retry
 * through Spring Boot's own {@code spring.grpc.client.channel.via-boot.service-config}, taken over by the
 * engine), and the lab's {@code sample.flaky.Flaky}, whose {@code Feed} stream a {@link FeedResumption} bean resumes
 * on a fourth channel. At start-up it runs the showcase ({@link Showcase}) and prints what each channel did; it then
 * keeps serving Actuator ({@code /actuator/health/grpcRetry}, {@code /actuator/grpcretry}) unless started
 * with {@code --showcase.exit=true}. With {@code --lab}: lab mode instead ({@link SpringGrpcLab}), which runs
 * the lab's R1 and R2 tables through {@code grpc.retry.*} and through Spring Boot's service config, then R7 and R8.
 */
@SpringBootApplication
public class SpringGrpcSampleApplication {

    public static void main(String[] args) {
        if (Arrays.asList(args).contains("--lab")) {
            SpringGrpcLab.main(args);
            return;
        }
        SpringApplication.run(SpringGrpcSampleApplication.class, args);
    }

    @Bean
    FlakyService flakyService() {
        return new FlakyService();
    }

    /** The showcase's attempts and their backends (an ObservationHandler bean: Spring Boot registers it). */
    @Bean
    AttemptBackends attemptBackends() {
        return new AttemptBackends();
    }

    @Bean
    BindableService flakyServiceBinding(FlakyService flakyService) {
        return flakyService;
    }

    /** The lab's scripted service: the showcase reads its {@code Feed} stream, which the server breaks. */
    @Bean
    BindableService feedService() {
        return new io.github.grpcretry.sample.server.FlakyService(new ArrivalLog(), new FaultScript(42));
    }

    /**
     * Resumes a {@code Feed} stream that breaks after its first item, from the offset after the last one received;
     * the starter gives it to every channel's engine.
     */
    @Bean
    FeedResumption feedResumption() {
        return new FeedResumption();
    }
}
