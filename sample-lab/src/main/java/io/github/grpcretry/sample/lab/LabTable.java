package io.github.grpcretry.sample.lab;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** One experiment's table (R1, R2, R3 ...), rows in the order they were measured. */
public final class LabTable {

    private final String id;
    private final String title;
    private final String seedColumn;
    private final List<LabRow> rows = new ArrayList<>();
    private final Map<String, String> files = new LinkedHashMap<>();

    public LabTable(String id, String title, String seedColumn) {
        this.id = id;
        this.title = title;
        this.seedColumn = seedColumn;
    }

    /** A table of an experiment run through {@code clients}: the route they were configured through joins its id and title. */
    public static LabTable of(String id, String title, String seedColumn, LabClients clients) {
        return new LabTable(clients.routeId().isEmpty() ? id : id + "-" + clients.routeId(),
                clients.route().isEmpty() ? title : title + ", through " + clients.route(), seedColumn);
    }

    public LabTable add(LabRow row) {
        rows.add(row);
        return this;
    }

    /** A file written next to lab.md and lab.csv (e.g. a per-second series), by name. */
    public LabTable attach(String fileName, String content) {
        files.put(fileName, content);
        return this;
    }

    public Map<String, String> files() {
        return Map.copyOf(files);
    }

    public String id() {
        return id;
    }

    public String title() {
        return title;
    }

    public String seedColumn() {
        return seedColumn;
    }

    public List<LabRow> rows() {
        return List.copyOf(rows);
    }
}
