#!/usr/bin/env python3
"""Renders the panels of the operations kit's Grafana dashboard (ops/grafana/grpc-retry-dashboard.json)
from a real run, as docs/ops-dashboard.png.

No Grafana is involved. The script starts the sample application (sample-app, Spring Boot 3.5) and a real
Prometheus server (Debian's prometheus package) that scrapes its /actuator/prometheus every 2 s and
evaluates the kit's alert rules (ops/prometheus/grpc-retry-alerts.yml). It drives the demo through six
phases over its REST API, then runs each panel's own queries, exactly as the dashboard file holds them,
through Prometheus's HTTP API (query_range, a 5 s step) with the dashboard's variables set to "All"
($job and $client match everything) and $__rate_interval set to 30s, and draws each panel at its grid
position as an SVG chart (lines, legend from the panel's legendFormat, the panel's threshold line, phase
markers added by this script; a panel whose queries have different units gets plain-number ticks).
Headless Chromium takes the screenshot. A table under the panels lists each alert rule's state as
Prometheus evaluated it at the end of the run.

  ./mvnw -B -q -pl sample-app -am package -DskipTests        # builds sample-app/target/sample-app.jar
  python3 scripts/ops-dashboard-image.py [out.png]           # about 6 minutes

Needs java 17, prometheus, chromium (apt-get install -y prometheus chromium) and python3 on the PATH.
"""
import html
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DASHBOARD = os.path.join(ROOT, "ops", "grafana", "grpc-retry-dashboard.json")
RULES = os.path.join(ROOT, "ops", "prometheus", "grpc-retry-alerts.yml")
JAR = os.path.join(ROOT, "sample-app", "target", "sample-app.jar")
RATE_INTERVAL = "30s"
STEP = 5
SCRAPE = "2s"

# (label, seconds, demo settings): what the demo's traffic generator does in each phase
PHASES = [
    ("healthy, retry + throttling", 60, {"strategy": "THROTTLED", "failureRate": 0.02, "slowShare": 0.05}),
    ("50 % failures, retry + throttling", 75, {"strategy": "THROTTLED", "failureRate": 0.5, "slowShare": 0.05}),
    ("50 % failures, retry + budget", 75, {"strategy": "BUDGET", "failureRate": 0.5, "slowShare": 0.05}),
    ("30 % failures, plain retry", 60, {"strategy": "RETRY", "failureRate": 0.3, "slowShare": 0.05}),
    ("5 % slow, hedging (adaptive delay)", 45, {"strategy": "HEDGING", "failureRate": 0.02, "slowShare": 0.05}),
    ("30 % slow, hedging (adaptive delay)", 45, {"strategy": "HEDGING", "failureRate": 0.02, "slowShare": 0.3}),
]

COLORS = ["#73bf69", "#f2cc0c", "#8ab8ff", "#ff780a", "#f2495c", "#5794f2", "#b877d9", "#705da0",
          "#37872d", "#fade2a", "#c4162a", "#1f60c4", "#8f3bb8", "#96d98d", "#ffb357", "#ff7383"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"} if data else {})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read().decode()


def wait_for(url, what, timeout=180):
    end = time.time() + timeout
    while time.time() < end:
        try:
            http(url)
            return
        except Exception:
            time.sleep(1)
    sys.exit(what + " did not come up at " + url)


def resolve(expr):
    return (expr.replace("$__rate_interval", RATE_INTERVAL)
            .replace("$job", ".*").replace("$client", ".*"))


def legend(fmt, metric):
    out = fmt
    for k, v in metric.items():
        out = out.replace("{{" + k + "}}", v)
    return out.strip() or json.dumps(metric)


def fmt_value(v, unit):
    if unit == "percentunit":
        return ("%.1f%%" if v * 100 < 10 else "%.0f%%") % (v * 100)
    if unit == "reqps":
        return ("%.3g" % v) + " /s"
    if unit == "s":
        return ("%.3g" % v) + " s"
    return "%.3g" % v


def nice_ticks(lo, hi, n=4):
    span = hi - lo
    if span <= 0:
        span = abs(hi) or 1
    raw = span / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    t = math.ceil(lo / step) * step
    ticks = []
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 12))
        t += step
    return ticks


def panel_svg(panel, series, t0, t1, phase_marks, width, height):
    defaults = panel.get("fieldConfig", {}).get("defaults", {})
    unit = defaults.get("unit")
    if any(p.get("id") == "unit" for o in panel.get("fieldConfig", {}).get("overrides", []) for p in o.get("properties", [])):
        unit = None  # queries in different units share the one axis drawn here: plain numbers
    threshold = None
    steps = defaults.get("thresholds", {}).get("steps", [])
    if defaults.get("custom", {}).get("thresholdsStyle", {}).get("mode") == "line" and len(steps) > 1:
        threshold = steps[1]["value"]
    left, right, top, bottom = 62, 12, 8, 22
    columns = 3 if len(series) > 8 else 2
    legend_rows = math.ceil(len(series) / columns)
    plot_h = height - top - bottom - 16 * legend_rows - 6
    plot_w = width - left - right
    values = [v for s in series for (_, v) in s["points"]]
    lo = defaults.get("min", min(values) if values else 0)
    hi = max(values + ([threshold] if threshold is not None else []) + [lo + 1e-9]) if values else (threshold or 1)
    if lo == hi:
        hi = lo + 1
    hi = lo + (hi - lo) * 1.08

    def x(t):
        return left + (t - t0) / (t1 - t0) * plot_w

    def y(v):
        return top + plot_h - (v - lo) / (hi - lo) * plot_h

    parts = ['<svg width="%d" height="%d" xmlns="http://www.w3.org/2000/svg">' % (width, height)]
    for tick in nice_ticks(lo, hi):
        parts.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#2c3235"/>' % (left, left + plot_w, y(tick), y(tick)))
        parts.append('<text x="%d" y="%.1f" fill="#9fa7b3" font-size="11" text-anchor="end">%s</text>'
                     % (left - 6, y(tick) + 4, html.escape(fmt_value(tick, unit))))
    minute = 60
    first = math.ceil(t0 / minute) * minute
    for tm in range(int(first), int(t1) + 1, minute):
        parts.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#2c3235"/>' % (x(tm), x(tm), top, top + plot_h))
        parts.append('<text x="%.1f" y="%d" fill="#9fa7b3" font-size="11" text-anchor="middle">%s</text>'
                     % (x(tm), top + plot_h + 14, time.strftime("%H:%M", time.gmtime(tm))))
    for i, (tm, label) in enumerate(phase_marks):
        parts.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#6e7680" stroke-dasharray="2,3"/>'
                     % (x(tm), x(tm), top, top + plot_h))
        parts.append('<text x="%.1f" y="%d" fill="#6e7680" font-size="10">%d</text>' % (x(tm) + 3, top + 10, i + 1))
    if threshold is not None:
        parts.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#f2495c" stroke-dasharray="6,4"/>'
                     % (left, left + plot_w, y(threshold), y(threshold)))
    for s in series:
        runs, run, prev = [], [], None
        for (t, v) in s["points"]:
            if prev is not None and t - prev > STEP * 1.5:
                runs.append(run)
                run = []
            run.append("%.1f,%.1f" % (x(t), y(v)))
            prev = t
        runs.append(run)
        for r in runs:
            if len(r) > 1:
                parts.append('<polyline fill="none" stroke="%s" stroke-width="1.6" points="%s"/>' % (s["color"], " ".join(r)))
            elif r:
                cx, cy = r[0].split(",")
                parts.append('<circle cx="%s" cy="%s" r="1.8" fill="%s"/>' % (cx, cy, s["color"]))
    ly = top + plot_h + 32
    for i, s in enumerate(series):
        lx = left + (i % columns) * (plot_w // columns)
        yy = ly + (i // columns) * 16
        parts.append('<rect x="%d" y="%d" width="12" height="3" fill="%s"/>' % (lx, yy - 5, s["color"]))
        parts.append('<text x="%d" y="%d" fill="#ccccdc" font-size="11">%s</text>' % (lx + 17, yy, html.escape(s["name"])))
    parts.append("</svg>")
    return "".join(parts)


def render(dashboard, prom, t0, t1, phase_marks, alerts, out_html):
    cell_w, cell_h = 62, 34
    rows_html = []
    max_y = 0
    for panel in dashboard["panels"]:
        g = panel["gridPos"]
        series = []
        for target in panel["targets"]:
            q = urllib.parse.urlencode({"query": resolve(target["expr"]), "start": t0, "end": t1, "step": STEP})
            result = json.loads(http(prom + "/api/v1/query_range?" + q))
            if result["status"] != "success":
                sys.exit("query failed: " + target["expr"] + ": " + json.dumps(result))
            for r in sorted(result["data"]["result"], key=lambda r: legend(target.get("legendFormat", ""), r["metric"])):
                pts = [(float(t), float(v)) for (t, v) in r["values"] if v not in ("NaN", "+Inf", "-Inf")]
                if pts:
                    series.append({"name": legend(target.get("legendFormat", ""), r["metric"]), "points": pts})
        for i, s in enumerate(series):
            s["color"] = COLORS[i % len(COLORS)]
        w, h = g["w"] * cell_w - 8, g["h"] * cell_h - 8
        svg = panel_svg(panel, series, t0, t1, phase_marks, w, h - 26)
        rows_html.append('<div class="panel" style="left:%dpx;top:%dpx;width:%dpx;height:%dpx">'
                         '<div class="title">%s</div>%s</div>'
                         % (g["x"] * cell_w, g["y"] * cell_h, w, h, html.escape(panel["title"]), svg))
        max_y = max(max_y, (g["y"] + g["h"]) * cell_h)
    phases = "".join("<li>%s</li>" % html.escape(label) for (_, label) in phase_marks)
    alert_rows = "".join("<tr><td>%s</td><td class=\"%s\">%s</td><td>%s</td></tr>"
                         % (html.escape(a["name"]), a["state"], a["state"], html.escape(a["labels"])) for a in alerts)
    page = """<!doctype html><html><head><meta charset="utf-8"><style>
body{margin:0;background:#111217;color:#ccccdc;font-family:'Liberation Sans',Arial,sans-serif;}
.head{padding:10px 14px 4px 14px;font-size:13px;color:#9fa7b3}.head b{color:#ccccdc;font-size:17px}
.grid{position:relative;margin:6px 10px;height:%dpx}
.panel{position:absolute;background:#181b1f;border:1px solid #2c3235;border-radius:3px;box-sizing:border-box}
.title{font-size:13px;font-weight:bold;padding:6px 10px 2px 10px;color:#ccccdc}
ol{margin:2px 0 0 0;padding-left:22px;columns:3;font-size:12px}
table{margin:4px 14px 14px 14px;border-collapse:collapse;font-size:12px}td{padding:2px 14px 2px 0}
.firing{color:#f2495c}.pending{color:#ff9830}.inactive{color:#73bf69}
</style></head><body>
<div class="head"><b>grpc-retry</b> &nbsp; ops/grafana/grpc-retry-dashboard.json, every panel's own queries run by
Prometheus %s on the running sample (scrape every %s, $__rate_interval = %s, job and client = All); drawn by
scripts/ops-dashboard-image.py, not by Grafana. Dotted lines mark the phases of the demo's traffic:<ol>%s</ol></div>
<div class="grid">%s</div>
<div class="head">The alert rules (ops/prometheus/grpc-retry-alerts.yml) as that Prometheus evaluated them at the end of the run:</div>
<table>%s</table>
</body></html>""" % (max_y, html.escape(prom_version()), SCRAPE, RATE_INTERVAL, phases, "".join(rows_html), alert_rows)
    with open(out_html, "w") as f:
        f.write(page)
    return max_y


def prom_version():
    out = subprocess.run(["prometheus", "--version"], capture_output=True, text=True)
    first = (out.stdout or out.stderr).splitlines()[0]
    return first.split(" (")[0].replace("prometheus, version ", "")


def alert_states(prom):
    rules = json.loads(http(prom + "/api/v1/rules?type=alert"))["data"]["groups"]
    out = []
    for g in rules:
        for r in g["rules"]:
            if r["alerts"]:
                for a in r["alerts"]:
                    labels = ", ".join("%s=%s" % (k, v) for k, v in sorted(a["labels"].items())
                                       if k not in ("alertname", "severity"))
                    out.append({"name": r["name"], "state": a["state"], "labels": labels})
            else:
                out.append({"name": r["name"], "state": "inactive", "labels": ""})
    return out


def main():
    out_png = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs", "ops-dashboard.png")
    for tool in ("java", "prometheus", "chromium"):
        if shutil.which(tool) is None:
            sys.exit(tool + " is not on the PATH (apt-get install -y prometheus chromium)")
    if not os.path.exists(JAR):
        sys.exit(JAR + " is missing: ./mvnw -B -q -pl sample-app -am package -DskipTests")
    with open(DASHBOARD) as f:
        dashboard = json.load(f)
    work = tempfile.mkdtemp(prefix="ops-dashboard-")
    http_port, grpc_port, prom_port = free_port(), free_port(), free_port()
    app = f"http://127.0.0.1:{http_port}"
    prom = f"http://127.0.0.1:{prom_port}"
    procs = []
    try:
        jar = shutil.copy(JAR, os.path.join(work, "sample-app.jar"))  # a rebuild during the run must not replace it
        with open(os.path.join(work, "sample.log"), "w") as log:
            procs.append(subprocess.Popen(
                ["java", "-jar", jar, f"--server.port={http_port}", f"--sample.grpc-port={grpc_port}",
                 "--sample.showcase.enabled=false", "--sample.demo.rate=50",
                 # the sample's application.yml keeps exemplars off _count lines, which Prometheus 2.42 rejects
                 "--logging.level.io.github.grpcretry=WARN", "--logging.level.io.opentelemetry.exporter.logging=WARN"],
                stdout=log, stderr=subprocess.STDOUT))
        wait_for(app + "/actuator/health", "the sample")
        shutil.copy(RULES, os.path.join(work, "grpc-retry-alerts.yml"))
        with open(os.path.join(work, "prometheus.yml"), "w") as f:
            f.write(f"""global:
  scrape_interval: {SCRAPE}
  evaluation_interval: 5s
rule_files: [grpc-retry-alerts.yml]
scrape_configs:
  - job_name: sample
    metrics_path: /actuator/prometheus
    static_configs: [{{targets: ["127.0.0.1:{http_port}"]}}]
""")
        with open(os.path.join(work, "prometheus.log"), "w") as log:
            procs.append(subprocess.Popen(
                ["prometheus", "--config.file=" + os.path.join(work, "prometheus.yml"),
                 "--storage.tsdb.path=" + os.path.join(work, "data"), f"--web.listen-address=127.0.0.1:{prom_port}"],
                cwd=work, stdout=log, stderr=subprocess.STDOUT))
        wait_for(prom + "/-/ready", "prometheus")
        t0 = time.time()
        marks = []
        for (label, seconds, settings) in PHASES:
            http(app + "/api/demo/settings", settings)
            marks.append((time.time(), label))
            print(time.strftime("%H:%M:%S"), label, flush=True)
            time.sleep(seconds)
        time.sleep(4)  # the last scrape and rule evaluation of the run
        t1 = time.time()
        alerts = alert_states(prom)
        page = os.path.join(work, "dashboard.html")
        height = render(dashboard, prom, t0, t1, marks, alerts, page) + 250
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--user-data-dir=" + os.path.join(work, "chromium"),
                        f"--window-size=1500,{height}", "--screenshot=" + out_png, "file://" + page],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print("wrote", out_png, "(page and logs in", work + ")")
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


if __name__ == "__main__":
    main()
