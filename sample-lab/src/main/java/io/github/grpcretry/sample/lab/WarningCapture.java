package io.github.grpcretry.sample.lab;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * What the starter logs while a lab client application starts ({@code io.github.grpcretry}, WARN and
 * above), read from Logback. Attach it once the application's logging system is initialised (Spring
 * Boot's {@code ApplicationPreparedEvent}): Boot resets Logback before that.
 */
public final class WarningCapture {

    private final List<ILoggingEvent> events = new ArrayList<>();
    private Logger logger;
    private ListAppender<ILoggingEvent> appender;

    /** Starts capturing (does nothing when the application does not log through Logback). */
    public synchronized void attach() {
        if (appender != null || !(LoggerFactory.getLogger("io.github.grpcretry") instanceof Logger l)) {
            return;
        }
        ListAppender<ILoggingEvent> a = new ListAppender<>() {
            @Override
            protected void append(ILoggingEvent e) {
                synchronized (events) {
                    events.add(e);
                }
            }
        };
        a.setName("grpc-retry-lab-capture");
        a.setContext(l.getLoggerContext());
        a.start();
        l.addAppender(a);
        logger = l;
        appender = a;
    }

    /** The WARN (and ERROR) lines captured so far. */
    public List<String> warnings() {
        synchronized (events) {
            return events.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
                    .map(ILoggingEvent::getFormattedMessage).toList();
        }
    }

    /** Stops capturing. */
    public synchronized void detach() {
        if (appender != null) {
            logger.detachAppender(appender);
            appender.stop();
            appender = null;
        }
    }
}
