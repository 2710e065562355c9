#!/usr/bin/env python3
"""Interleaved A/B of the unary success path between two builds of the benchmarks jar.

Each round runs, per transport, one JMH fork of the old build's interceptor engine (c), one of the new
build's (c) and one of the bare channel (a, from the new jar), in an order that rotates from round to
round; ratios are taken within a round (new/old, and c/a for each build) and reported as the median and
range over rounds. Forks minutes apart on a shared machine differ by +-15 %, so only ratios within a
round say anything (see docs/benchmarks.md, "Why Interleaved").

  ./mvnw -B -q -pl benchmarks -am package -DskipTests          # in each checkout
  python3 scripts/ab-unary.py OLD.jar NEW.jar [rounds] [transports]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile


def fork(jar, transport, client):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    try:
        subprocess.run(
            ["java", "-Djmh.ignoreLock=true", "-jar", jar, r"UnaryBenchmark\.unary1Thread$", "-bm", "thrpt", "-f", "1",
             "-wi", "8", "-w", "1s", "-i", "5", "-r", "1s",
             "-p", "transport=" + transport, "-p", "client=" + client, "-rf", "json", "-rff", out],
            check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            return json.load(f)[0]["primaryMetric"]["score"]
    finally:
        os.unlink(out)


def summary(values):
    values = sorted(values)
    return "%.3f (%.3f-%.3f)" % (statistics.median(values), values[0], values[-1])


def main():
    old, new = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    transports = sys.argv[4].split(",") if len(sys.argv) > 4 else ["IN_PROCESS", "NETTY"]
    slots = [("old c", old, "INTERCEPTOR"), ("new c", new, "INTERCEPTOR"), ("a", new, "BARE")]
    for transport in transports:
        rows = []
        for r in range(rounds):
            row = {}
            for i in range(len(slots)):
                name, jar, client = slots[(r + i) % len(slots)]
                row[name] = fork(jar, transport, client)
            rows.append(row)
            print("%s round %d: %s" % (transport, r + 1,
                  ", ".join("%s %.2f" % (k, row[k]) for k in ("a", "old c", "new c"))), flush=True)
        print("%s over %d rounds: new/old %s, c/a old %s, c/a new %s" % (
            transport, rounds,
            summary([x["new c"] / x["old c"] for x in rows]),
            summary([x["old c"] / x["a"] for x in rows]),
            summary([x["new c"] / x["a"] for x in rows])), flush=True)


if __name__ == "__main__":
    main()
