package io.github.grpcretry.sample.server;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Configuration(proxyBeanMethods = false)
public class FlakyServerConfiguration {

    @Bean
    ArrivalLog arrivalLog() {
        return new ArrivalLog();
    }

    @Bean
    FaultScript faultScript(@Value("${sample.flaky.seed:42}") long seed) {
        return new FaultScript(seed);
    }
}
