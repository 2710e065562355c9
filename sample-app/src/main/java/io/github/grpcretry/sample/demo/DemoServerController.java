package io.github.grpcretry.sample.demo;

import io.github.grpcretry.sample.server.QueueingBackend;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The backend's capacity, for the dashboard's stall control: {@code GET /api/demo/server} (workers,
 * service time, capacity, queue limit and length, stalled, drop-expired), {@code POST /api/demo/server}
 * with {@code {"dropExpired": true}}, and {@code POST /api/demo/server/stall} with
 * {@code {"seconds": 2}} (capacity 0 for that long; 2 s when the body is empty). The queue is emptied
 * whenever the demo's strategy changes (see DemoConfiguration).
 */
@RestController
@ConditionalOnProperty(name = "sample.demo.enabled", havingValue = "true", matchIfMissing = true)
@RequestMapping("/api/demo/server")
public class DemoServerController {

    static final double MAX_STALL_SECONDS = 30;

    private final QueueingBackend backend;

    public DemoServerController(QueueingBackend backend) {
        this.backend = backend;
    }

    /** A partial update: null keeps the value. */
    public record Update(Boolean dropExpired) {
    }

    /** How long to stall, in seconds (null: 2). */
    public record Stall(Double seconds) {
    }

    @GetMapping
    public Map<String, Object> state() {
        QueueingBackend.Settings s = backend.settings();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("workers", s.workers());
        m.put("serviceTimeMs", s.serviceTime().toMillis());
        m.put("capacity", s.capacityPerSecond());
        m.put("queueLimit", s.queueLimit());
        m.put("queueLength", backend.queueLength());
        m.put("stalled", backend.stalled());
        m.put("dropExpired", backend.dropExpired());
        return m;
    }

    @PostMapping
    public Map<String, Object> update(@RequestBody Update update) {
        if (update.dropExpired() != null) {
            backend.setDropExpired(update.dropExpired());
        }
        return state();
    }

    @PostMapping("/stall")
    public Map<String, Object> stall(@RequestBody(required = false) Stall stall) {
        double seconds = stall == null || stall.seconds() == null ? 2 : stall.seconds();
        if (!(seconds > 0 && seconds <= MAX_STALL_SECONDS)) {
            throw new IllegalArgumentException("seconds must be in (0, " + (int) MAX_STALL_SECONDS + "], was " + seconds);
        }
        backend.stall(Duration.ofMillis(Math.round(seconds * 1000)));
        return state();
    }

    @ExceptionHandler(IllegalArgumentException.class)
    public ResponseEntity<Map<String, String>> invalid(IllegalArgumentException e) {
        return ResponseEntity.badRequest().body(Map.of("error", e.getMessage()));
    }
}
