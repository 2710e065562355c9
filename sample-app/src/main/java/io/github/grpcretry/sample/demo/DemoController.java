package io.github.grpcretry.sample.demo;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.core.env.Environment;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The demo's REST API (what the dashboard uses): {@code GET /api/demo} (settings, strategies,
 * engine), {@code GET|POST /api/demo/settings} (POST takes a partial JSON update such as
 * {@code {"failureRate": 1.0, "strategy": "THROTTLED"}}) and {@code GET /api/demo/series?since=<epoch ms>}
 * (one point per second, the last five minutes).
 */
@RestController
@org.springframework.boot.autoconfigure.condition.ConditionalOnProperty(name = "sample.demo.enabled", havingValue = "true", matchIfMissing = true)
@RequestMapping("/api/demo")
public class DemoController {

    private final TrafficGenerator generator;
    private final DemoSampler sampler;
    private final Environment environment;

    public DemoController(TrafficGenerator generator, DemoSampler sampler, Environment environment) {
        this.generator = generator;
        this.sampler = sampler;
        this.environment = environment;
    }

    @GetMapping
    public Map<String, Object> overview() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("settings", generator.settings());
        m.put("strategies", Arrays.stream(DemoStrategy.values()).map(s -> Map.of("name", s.name(), "label", s.label(),
                "channel", s.channel(), "description", s.description())).toList());
        m.put("engine", environment.getProperty("grpc.retry.engine", "interceptor"));
        m.put("inFlight", generator.inFlight());
        m.put("dropped", generator.dropped());
        return m;
    }

    @GetMapping("/settings")
    public DemoSettings settings() {
        return generator.settings();
    }

    @PostMapping("/settings")
    public DemoSettings update(@RequestBody DemoSettings.Update update) {
        return generator.update(update);
    }

    @GetMapping("/series")
    public List<DemoSampler.Point> series(@RequestParam(defaultValue = "0") long since) {
        return sampler.since(since);
    }

    @ExceptionHandler(IllegalArgumentException.class)
    public ResponseEntity<Map<String, String>> invalid(IllegalArgumentException e) {
        return ResponseEntity.badRequest().body(Map.of("error", e.getMessage()));
    }
}
