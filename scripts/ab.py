#!/usr/bin/env python3
"""Interleaved A/B of the interceptor engine between two builds of the benchmarks jar.

Each round runs, per benchmark and transport, one JMH fork of every slot below, in an order that rotates
from round to round; ratios are taken within a round and reported as the median and range (min-max) over
rounds. Forks minutes apart on a shared machine differ by +-15 %, so only ratios within a round say
anything (docs/benchmarks.md, "Why Interleaved"). Each fork also reports the process CPU time per op
(CpuTimeProfiler), which moves far less than throughput when other processes compete for the cores;
its ratios are given as y/x, so that they read like throughput ratios (above 1: x is cheaper). The reference variants (a, b, e, f) come from NEW.jar;
they do not depend on the engine. Given the same jar twice it is an A/A run: new/old then shows the
noise of the method itself.

  unary    UnaryBenchmark.unary1Thread      old c, new c, (a) bare, (b) grpc-java's retry, (e) forwarding
                                            interceptor, (f) forwarding with a stream tracer per attempt
  server   ServerStreamingBenchmark         old c, new c, (a) bare, (b) grpc-java's retry, (e) forwarding
  client   ClientStreamingBenchmark         old c, new c, (a) bare, (b) grpc-java's retry

  ./mvnw -B -q -pl benchmarks -am package -DskipTests    # in each checkout; copy each benchmarks.jar aside
  python3 scripts/ab.py OLD.jar NEW.jar [--rounds 5] [--transports IN_PROCESS,NETTY]
                        [--benchmarks unary,server,client] [--warmup N] [--measure N] [--out FILE.md]
                        [--jvm-args=-XX:...]
  python3 scripts/ab.py --render FILE.md.json x x

Per round it prints each fork's score; after every round it rewrites FILE.md (default ab-results.md)
with the Markdown tables of all rounds so far, and FILE.md.json with the scores, so a run cut short
still leaves its figures.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

BENCHMARKS = {
    # name: (JMH regex, warm-up iterations, measurement iterations, reference slots, ratios)
    "unary": (r"UnaryBenchmark\.unary1Thread$", 8, 5,
              [("a", "BARE"), ("b", "NATIVE"), ("e", "FORWARDING"), ("f", "TRACED")],
              [("new/old", "new c", "old c"), ("c/a old", "old c", "a"), ("c/a new", "new c", "a"),
               ("c/e old", "old c", "e"), ("c/e new", "new c", "e"), ("f/e", "f", "e"), ("b/e", "b", "e"),
               ("c/f old", "old c", "f"), ("c/f new", "new c", "f")]),
    "server": (r"ServerStreamingBenchmark\.serverStream$", 6, 5, [("a", "BARE"), ("b", "NATIVE"), ("e", "FORWARDING")],
               [("new/old", "new c", "old c"), ("c/a old", "old c", "a"), ("c/a new", "new c", "a"),
                ("b/a", "b", "a"), ("e/a", "e", "a"), ("c/e new", "new c", "e")]),
    "client": (r"ClientStreamingBenchmark\.clientStream$", 6, 5, [("a", "BARE"), ("b", "NATIVE")],
               [("new/old", "new c", "old c"), ("c/a old", "old c", "a"), ("c/a new", "new c", "a"),
                ("b/a", "b", "a"), ("c/b new", "new c", "b")]),
}
TITLES = {
    "unary": "Unary success path, 1 thread (calls/ms)",
    "server": "Server stream of 1000 responses, 1 thread (streams/ms)",
    "client": "Client stream of 1000 requests, replay held until the answer, 1 thread (streams/ms)",
}


def fork(jar, regex, transport, client, warmup, measure, jvm_args=""):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    try:
        run = subprocess.run(
            ["java", "-Djmh.ignoreLock=true", "-jar", jar, regex, "-bm", "thrpt", "-f", "1",
             "-wi", str(warmup), "-w", "1s", "-i", str(measure), "-r", "1s",
             "-p", "transport=" + transport, "-p", "client=" + client, "-rf", "json", "-rff", out,
             "-prof", "io.github.grpcretry.benchmarks.CpuTimeProfiler"]
            + (["-jvmArgsAppend", jvm_args] if jvm_args else []),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            raise SystemExit("fork failed: %s %s %s %s\n%s" % (jar, regex, transport, client, run.stderr))
        with open(out) as f:
            result = json.load(f)[0]
        return result["primaryMetric"]["score"], result["secondaryMetrics"]["cpu.time.norm"]["score"]
    finally:
        os.unlink(out)


def summary(values):
    values = sorted(values)
    return "**%.3f** (%.3f-%.3f)" % (statistics.median(values), values[0], values[-1])


def render(args, results, loads):
    lines = ["OLD %s, NEW %s; one fork per slot per round, order rotating; warm-up/measurement 1 s iterations "
             "(%s); load average at the forks' starts %.1f-%.1f%s." % (
                 args.old, args.new, ", ".join("%s %d+%d" % (b, *iterations(args, b)) for b in args.benchmarks),
                 min(loads), max(loads), "; every fork with " + args.jvm_args if args.jvm_args else ""), ""]
    for bench in args.benchmarks:
        slots = ["old c", "new c"] + [s for s, _ in BENCHMARKS[bench][3]]
        for transport in args.transports:
            rows = results.get((bench, transport), [])
            if not rows:
                continue
            lines += ["#### %s, %s" % (TITLES[bench], transport), "",
                      "| round | " + " | ".join(slots) + " | " + " | ".join("CPU µs " + s for s in slots) + " |",
                      "|---|" + "---|" * (2 * len(slots))]
            for i, row in enumerate(rows):
                lines.append("| %d | " % (i + 1) + " | ".join("%.4g" % row[s] for s in slots) + " | "
                             + " | ".join("%.4g" % (row[s + " cpu"] / 1000) for s in slots) + " |")
            lines += ["", "| ratio | throughput x/y, median (min-max) over %d rounds "
                          "| CPU per op y/x, median (min-max) |" % len(rows), "|---|---|---|"]
            for name, x, y in BENCHMARKS[bench][4]:
                lines.append("| %s | %s | %s |" % (name, summary([r[x] / r[y] for r in rows]),
                                                  summary([r[y + " cpu"] / r[x + " cpu"] for r in rows])))
            lines.append("")
    return "\n".join(lines)


def iterations(args, bench):
    _, warmup, measure, _, _ = BENCHMARKS[bench]
    return (args.warmup or warmup, args.measure or measure)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--transports", default="IN_PROCESS,NETTY")
    p.add_argument("--benchmarks", default="unary,server,client")
    p.add_argument("--warmup", type=int, default=0, help="warm-up iterations (default: per benchmark)")
    p.add_argument("--measure", type=int, default=0, help="measurement iterations (default: per benchmark)")
    p.add_argument("--jvm-args", default="", help="JVM options for every fork (JMH -jvmArgsAppend)")
    p.add_argument("--out", default="ab-results.md")
    p.add_argument("--render", metavar="FILE.md.json", help="print the tables of an earlier run and exit")
    args = p.parse_args()
    if args.render:
        with open(args.render) as f:
            saved = json.load(f)
        for key in ("old", "new", "benchmarks", "transports", "warmup", "measure"):
            setattr(args, key, saved[key])
        args.jvm_args = saved.get("jvm_args", "")
        print(render(args, {(r["benchmark"], r["transport"]): r["rounds"] for r in saved["results"]}, saved["loads"]))
        return
    args.transports = args.transports.split(",")
    args.benchmarks = args.benchmarks.split(",")
    results, loads = {}, []
    for r in range(args.rounds):
        for bench in args.benchmarks:
            regex, _, _, refs, _ = BENCHMARKS[bench]
            warmup, measure = iterations(args, bench)
            slots = [("old c", args.old, "INTERCEPTOR"), ("new c", args.new, "INTERCEPTOR")] + \
                    [(name, args.new, client) for name, client in refs]
            for transport in args.transports:
                row = {}
                for i in range(len(slots)):
                    name, jar, client = slots[(r + i) % len(slots)]
                    loads.append(os.getloadavg()[0])
                    row[name], row[name + " cpu"] = fork(jar, regex, transport, client, warmup, measure,
                                                         args.jvm_args)
                results.setdefault((bench, transport), []).append(row)
                print("%s round %d %s %s: %s" % (time.strftime("%H:%M:%S"), r + 1, bench, transport,
                      ", ".join("%s %.4g (%.4g µs CPU)" % (s, row[s], row[s + " cpu"] / 1000) for s, _, _ in slots)),
                      flush=True)
        save(args, results, loads)
    print(render(args, results, loads))


def save(args, results, loads):
    """FILE.md, and FILE.md.json with every score, which --render turns into FILE.md again."""
    with open(args.out, "w") as f:
        f.write(render(args, results, loads) + "\n")
    with open(args.out + ".json", "w") as f:
        json.dump({"old": args.old, "new": args.new, "benchmarks": args.benchmarks, "transports": args.transports,
                   "warmup": args.warmup, "measure": args.measure, "jvm_args": args.jvm_args, "loads": loads,
                   "results": [{"benchmark": b, "transport": t, "rounds": rows}
                               for (b, t), rows in results.items()]}, f, indent=1)


if __name__ == "__main__":
    main()
