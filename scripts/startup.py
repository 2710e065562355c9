#!/usr/bin/env python3
"""Start-up cost of the starter on both Spring Boot lines (docs/benchmarks.md, "Start-up cost").

The application in startup/ (a servlet web application with Actuator, Prometheus and one gRPC channel) is
built for each line (startup/boot3-app: net.devh on Spring Boot 3.5; startup/boot4-app: Spring gRPC on
Spring Boot 4.1) and started with its whole class path ("with") and with the starter's own jars taken off
it ("without": retry-core, retry-spring and the line's autoconfigure and starter modules; everything they
bring stays). Each round starts all four variants once, in a seeded random order, and reads the time from
the JVM's start to ApplicationReadyEvent and the CPU time the main thread (where the context starts) spent
until then; the table gives the medians over the rounds and the medians of the per-round differences. A
shared machine moves the wall time of every run (the main thread's CPU time much less: it does not count
waiting for a core), so only interleaved medians say anything, and the load average is printed with them.

With --before DIR (another checkout of this repository, its starter modules packaged there with
`./mvnw -B -q package -DskipTests -pl retry-starter,retry-spring-grpc-starter -am`) each round also starts
"with, before": the same class path with the starter's jars taken from DIR; the table then adds the
medians of with - before per round, so a change to the starter is measured against the commit before it
in the same rounds.

With --pairs N (an even number) each line's "with" variant is started 4 times and goes on to start N further
contexts in pairs, one of each pair with the starter's auto-configurations excluded: the per-context cost a
test suite pays once the classes are loaded, measured within one JVM a few hundred ms apart.

With --together N each line's variants are also started at the same moment, N rounds per line: runs that
share the machine's moment share its speed, so the differences carry little of the drift that moves runs
minutes apart (the starts above), and each run's process CPU time (all its threads) is read too.

With --cds every variant runs with Spring Boot's recommended class data sharing (CDS): the application's classes
are put in a jar (CDS takes no directories), one training run per variant writes its archive
(-XX:ArchiveClassesAtExit) and every later start of the variant maps it (-XX:SharedArchiveFile), so the classes
every run loads come from the archive, the starter's included.

With --census it starts each variant once and counts what is deterministic, which the load on a shared machine
does not move: the classes one start loads (-Xlog:class+load; the starter's own, and lambdas), and what the context
holds of the starter's (bean definitions, configuration classes, the sources and conditions of Spring Boot's
condition evaluation report); with --census-dir DIR the class lists and the starter's beans are kept there.

With --steps N it then starts each line's "with" variant N more times recording Spring's start-up steps
with their wall and CPU time, and lists the starter's costliest steps by CPU time (the outermost steps
whose bean or class is the starter's), as medians over the N runs, and the classes each variant loads.

  python3 scripts/startup.py [--rounds 15] [--steps 5] [--no-build] [--seed 1] [--before DIR] [--pairs N] [--together N]
                             [--cds] [--census] [--census-dir DIR]
"""
import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINES = {"3.5": "startup/boot3-app", "4.1": "startup/boot4-app"}
STARTER_MODULES = ("retry-core", "retry-spring", "retry-starter-autoconfigure", "retry-starter",
                   "retry-spring-grpc-autoconfigure", "retry-spring-grpc-starter")
MAIN = "io.github.grpcretry.startup.StartupApplication"
# A step is the starter's when its bean or class is: beans named grpcRetry*/grpcDeadline*, the grpc.retry
# properties bean, classes of io.github.grpcretry outside this application's own package.
STARTER_STEP = re.compile(r"(?:beanName|beanType|className|configClass)="
                          r"(?:grpcRetry|grpcDeadline|grpc\.retry-|io\.github\.grpcretry\.(?!startup\.))")
# A line of -Xlog:class+load that loads one of the starter's classes.
STARTER_CLASS = re.compile(r"\] io\.github\.grpcretry\.(?!startup\.)")


def build():
    modules = ",".join(LINES.values())
    subprocess.run([os.path.join(ROOT, "mvnw"), "-B", "-q", "-Pstartup", "-pl", modules, "-am", "package",
                    "dependency:build-classpath", "-Dmdep.outputFile=target/classpath.txt", "-DskipTests",
                    "-Dmaven.javadoc.skip=true", "-Dmaven.source.skip=true", "-Djapicmp.skip=true"],
                   cwd=ROOT, check=True)


def starter_entry(entry):
    rel = os.path.relpath(entry, ROOT)
    return rel.split(os.sep)[0] in STARTER_MODULES


def class_paths(module, before=None):
    with open(os.path.join(ROOT, module, "target", "classpath.txt")) as f:
        entries = f.read().strip().split(os.pathsep)
    own = os.path.join(ROOT, module, "target", "classes")
    starter = [e for e in entries if starter_entry(e)]
    if not starter:
        sys.exit(module + ": no starter module on its class path")
    paths = {"with": [own] + entries, "without": [own] + [e for e in entries if not starter_entry(e)]}
    if before:
        moved = [os.path.join(before, os.path.relpath(e, ROOT)) if starter_entry(e) else e for e in entries]
        missing = [e for e in moved if e not in entries and not os.path.exists(e)]
        if missing:
            sys.exit("--before: not packaged there: " + ", ".join(missing))
        paths["before"] = [own] + moved
    return paths


# With --cds: the CDS archive of each variant's class path.
ARCHIVES = {}


def java(class_path, *extra):
    """The command that starts the application on class_path (mapping its CDS archive, with --cds)."""
    archive = ARCHIVES.get(tuple(class_path))
    return ["java", *(["-XX:SharedArchiveFile=" + archive] if archive else []), *extra, "-cp",
            os.pathsep.join(class_path), MAIN]


def with_cds(variants, directory):
    """The variants on class paths that CDS accepts (the application's classes as a jar), each with the archive
    its training run wrote."""
    jars = {}
    out = {}
    for name, class_path in variants.items():
        own = class_path[0]
        if own not in jars:
            jars[own] = os.path.join(directory, "application-%d.jar" % len(jars))
            subprocess.run(["jar", "cf", jars[own], "-C", own, "."], check=True)
        out[name] = [jars[own]] + class_path[1:]
        archive = os.path.join(directory, name.replace(" ", "-") + ".jsa")
        start(out[name], ["-XX:ArchiveClassesAtExit=" + archive])
        ARCHIVES[tuple(out[name])] = archive
    return out


def ready(returncode, output):
    """The READY line a start printed: (ms since the JVM started, main-thread CPU ms); exits if it failed."""
    line = re.search(r"^READY (\d+) (\d+)$", output, re.M)
    if returncode != 0 or not line:
        sys.exit("start-up failed:\n" + output[-8000:])
    return int(line.group(1)), int(line.group(2))


def start(class_path, extra=()):
    """One start: (ms to ready, main-thread CPU ms, process wall ms, process CPU ms of all its threads to its exit)."""
    begin = time.monotonic()
    with tempfile.TemporaryFile(mode="w+") as out:
        proc = subprocess.Popen(java(class_path, *extra), stdout=out, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = (time.monotonic() - begin) * 1000
        out.seek(0)
        return (*ready(os.waitstatus_to_exitcode(status), out.read()), wall, (usage.ru_utime + usage.ru_stime) * 1000)


def start_together(class_paths, order):
    """Starts one JVM per variant at the same moment and waits for all: {variant: (ready ms, main-thread CPU ms,
    process CPU ms)}. Runs that share the machine's moment share its speed, so their differences carry little
    of the drift that moves runs minutes apart."""
    running = {}
    for v in order:
        out = tempfile.TemporaryFile(mode="w+")
        proc = subprocess.Popen(java(class_paths[v]), stdout=out,
                                stderr=subprocess.STDOUT, text=True, cwd=ROOT)
        running[v] = (proc, out)
    results = {}
    for v, (proc, out) in running.items():
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0)
        text = out.read()
        out.close()
        results[v] = (*ready(os.waitstatus_to_exitcode(status), text), (usage.ru_utime + usage.ru_stime) * 1000)
    return results


def together(variants, count, seed):
    """Per line, `count` rounds that start the line's variants together (see start_together); the medians of
    the per-round differences against 'without' in main-thread CPU, process CPU and time to ready."""
    rng = random.Random(seed)
    print("Start-up with the variants of a line started together (%d rounds per line, load average %s): medians of "
          "the per-round differences against 'without', ms (interquartile range)\n" % (count, load()))
    print("| Spring Boot | variant | main-thread CPU, without | main-thread CPU | process CPU | time to ready |")
    print("|---|---|---:|---:|---:|---:|")
    for line in LINES:
        mine = {v: cp for v, cp in variants.items() if v.startswith(line + " ")}
        rows = {v: [] for v in mine}
        for r in range(count):
            order = list(mine)
            rng.shuffle(order)
            for v, result in start_together(mine, order).items():
                rows[v].append(result)
            print("round %d: %s (load %s)" % (r + 1, ", ".join("%s CPU %d ms, process %d ms" % (v, rows[v][-1][1],
                  rows[v][-1][2]) for v in mine), load()), file=sys.stderr)
        base = rows[line + " without"]

        def differences(xs, ys):
            """Main-thread CPU, process CPU and time to ready of xs - ys, per round."""
            return " | ".join(spread([x[i] for x in xs], [y[i] for y in ys]) for i in (1, 2, 0))

        for v in mine:
            if v.endswith(" without"):
                continue
            print("| %s | %s | %d | %s |" % (line, v.split(" ", 1)[1], statistics.median(r[1] for r in base),
                                             differences(rows[v], base)))
            if v.endswith(" with") and line + " before" in mine:
                print("| %s | with - before | | %s |" % (line, differences(rows[v], rows[line + " before"])))
        sys.stdout.flush()


def load():
    return "%.1f %.1f %.1f" % os.getloadavg()


def rounds(variants, count, seed):
    rng = random.Random(seed)
    ready = {v: [] for v in variants}
    cpu = {v: [] for v in variants}
    wall = {v: [] for v in variants}
    process = {v: [] for v in variants}
    loads = [load()]
    for r in range(count):
        order = list(variants)
        rng.shuffle(order)
        for v in order:
            ms, c, w, pc = start(variants[v])
            ready[v].append(ms)
            cpu[v].append(c)
            wall[v].append(w)
            process[v].append(pc)
        loads.append(load())
        print("round %d: %s (load %s)" % (r + 1, ", ".join("%s %d ms, CPU %d ms, process %d ms" % (
            v, ready[v][-1], cpu[v][-1], process[v][-1]) for v in variants), loads[-1]), file=sys.stderr)
    return ready, cpu, wall, process, loads


def steps(class_path, runs):
    """Median CPU and wall time (ms) of each outermost starter step, by step name and bean/class."""
    per_run = []
    for _ in range(runs):
        with tempfile.NamedTemporaryFile(suffix=".tsv", delete=False) as f:
            out = f.name
        try:
            start(class_path, ["-Dstartup.steps=" + out])
            rows = {}
            with open(out) as f:
                for line in f:
                    sid, parent, name, wall_us, cpu_us, tags = (line.rstrip("\n").split("\t") + [""])[:6]
                    rows[sid] = (parent, name, (int(cpu_us), int(wall_us)), tags)
        finally:
            os.unlink(out)
        mine = {sid for sid, (_, _, _, tags) in rows.items() if STARTER_STEP.search(tags)}
        totals = {}
        for sid in mine:
            parent = rows[sid][0]
            outermost = True
            while parent in rows:
                if parent in mine:
                    outermost = False
                    break
                parent = rows[parent][0]
            if outermost:
                _, name, micros, tags = rows[sid]
                subject = re.search(r"(?:beanName|beanType|className|configClass)=(\S+)", tags)
                key = (name, subject.group(1) if subject else tags)
                c, w = totals.get(key, (0, 0))
                totals[key] = (c + micros[0], w + micros[1])
        per_run.append(totals)
    keys = set().union(*per_run)
    medians = {k: tuple(statistics.median([r.get(k, (0, 0))[i] for r in per_run]) / 1000 for i in (0, 1))
               for k in keys}
    total = tuple(statistics.median([sum(v[i] for v in r.values()) for r in per_run]) / 1000 for i in (0, 1))
    return sorted(medians.items(), key=lambda kv: -kv[1][0]), total


def classes(class_path):
    with tempfile.NamedTemporaryFile(suffix=".log", delete=False) as f:
        out = f.name
    try:
        start(class_path, ["-Xlog:class+load=info:file=" + out])
        with open(out) as f:
            lines = f.readlines()
    finally:
        os.unlink(out)
    # by name, wherever it was loaded from (a jar, or the CDS archive): the starter's classes, not its lambdas
    starter = sum(1 for line in lines if STARTER_CLASS.search(line) and "$$Lambda" not in line)
    return len(lines), starter


def census(class_path, keep=None, name=""):
    """One start: {classes, starter classes, starter lambdas, beans, starterBeans, ...} (see StartupApplication)."""
    with tempfile.NamedTemporaryFile(suffix=".log", delete=False) as f:
        log = f.name
    with tempfile.NamedTemporaryFile(suffix=".txt", delete=False) as f:
        beans = f.name
    try:
        start(class_path, ["-Xlog:class+load=info:file=" + log, "-Dstartup.census=" + beans])
        with open(log) as f:
            loaded = [line.split("] ", 1)[-1].split(" source:")[0].strip() for line in f]
        with open(beans) as f:
            held = f.read().splitlines()
    finally:
        os.unlink(log)
        os.unlink(beans)
    if keep:
        os.makedirs(keep, exist_ok=True)
        with open(os.path.join(keep, name.replace(" ", "-") + ".classes"), "w") as f:
            f.write("\n".join(sorted(loaded)) + "\n")
        with open(os.path.join(keep, name.replace(" ", "-") + ".beans"), "w") as f:
            f.write("\n".join(held) + "\n")
    mine = [c for c in loaded if c.startswith("io.github.grpcretry.") and not c.startswith("io.github.grpcretry.startup.")]
    counts = {"classes": len(loaded), "starterClasses": sum(1 for c in mine if "$$Lambda" not in c),
              "starterLambdas": sum(1 for c in mine if "$$Lambda" in c)}
    for line in held:
        key, _, value = line.partition(" ")
        if value.isdigit():
            counts[key] = int(value)
    return counts


def print_census(variants, keep):
    print("Census of one start per variant (deterministic counts; lambdas included in the classes)\n")
    print("| Spring Boot | classes, without | classes, with | with - without | the starter's classes (+ lambdas) "
          "| beans, without / with | the starter's beans | its configuration classes | condition sources / conditions |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for line in LINES:
        w = census(variants[line + " with"], keep, line + " with")
        o = census(variants[line + " without"], keep, line + " without")
        print("| %s | %d | %d | %+d | %d (+%d) | %d / %d | %d | %d | %d / %d |" % (
            line, o["classes"], w["classes"], w["classes"] - o["classes"], w["starterClasses"], w["starterLambdas"],
            o["beans"], w["beans"], w["starterBeans"], w["starterConfigurationClasses"],
            w["starterConditionSources"], w["starterConditions"]))
        sys.stdout.flush()
    print()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-build", action="store_true")
    p.add_argument("--before", help="a checkout whose packaged starter jars are the 'before' variant")
    p.add_argument("--together", type=int, default=0,
                   help="rounds per line that start the line's variants at the same moment")
    p.add_argument("--pairs", type=int, default=0,
                   help="further contexts per JVM, in with/excluded pairs (the per-context cost in a test suite)")
    p.add_argument("--cds", action="store_true", help="every variant with its own CDS archive (class data sharing)")
    p.add_argument("--census", action="store_true",
                   help="count classes loaded, the starter's beans, configuration classes and conditions (one start each)")
    p.add_argument("--census-dir", help="with --census: keep the class lists and the starter's beans here")
    a = p.parse_args()
    if not a.no_build:
        build()
    variants = {}
    for line, module in LINES.items():
        for kind, cp in class_paths(module, a.before).items():
            variants["%s %s" % (line, kind)] = cp
    if a.cds:
        directory = tempfile.mkdtemp(prefix="startup-cds-")
        try:
            variants = with_cds(variants, directory)
            measure(a, variants)
        finally:
            shutil.rmtree(directory)
    else:
        measure(a, variants)


def measure(a, variants):
    if a.census:
        print_census(variants, a.census_dir)
    if a.steps:
        for line in LINES:
            top, total = steps(variants[line + " with"], a.steps)
            loaded_with, starter_classes = classes(variants[line + " with"])
            loaded_without, _ = classes(variants[line + " without"])
            print("Spring Boot %s: the starter's outermost start-up steps, median of %d runs (sum: CPU %.1f ms, "
                  "wall %.1f ms); classes loaded %d with (%d of them the starter's), %d without\n"
                  % (line, a.steps, total[0], total[1], loaded_with, starter_classes, loaded_without))
            print("| step | bean or class | CPU ms | wall ms |")
            print("|---|---|---:|---:|")
            for (name, subject), (c, w) in top[:8]:
                print("| %s | %s | %.1f | %.1f |" % (name, subject, c, w))
            print()
            sys.stdout.flush()

    if a.pairs:
        pairs(variants, a.pairs)
    if a.together:
        together(variants, a.together, a.seed)
    if not a.rounds:
        return
    ready, cpu, wall, process, loads = rounds(variants, a.rounds, a.seed)
    print("Start-up to ApplicationReadyEvent, median of %d interleaved rounds (load average %s at the start, "
          "%s at the end)\n" % (a.rounds, loads[0], loads[-1]))
    print("| Spring Boot | wall, without (ms) | wall, with (ms) | wall, with - without (ms) "
          "| main-thread CPU, without (ms) | main-thread CPU, with (ms) | CPU, with - without (ms) "
          "| process wall, without / with (ms) | process CPU (all threads, to exit), with - without (ms) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for line in LINES:
        w, o = line + " with", line + " without"
        print("| %s | %d | %d | %+d | %d | %d | %s | %d / %d | %s |" % (
            line, statistics.median(ready[o]), statistics.median(ready[w]),
            statistics.median([x - y for x, y in zip(ready[w], ready[o])]),
            statistics.median(cpu[o]), statistics.median(cpu[w]), spread(cpu[w], cpu[o]),
            statistics.median(wall[o]), statistics.median(wall[w]), spread(process[w], process[o])))
    if a.before:
        print("\nThe same rounds, the starter's jars of --before against these (main-thread CPU, ms; median of the "
              "per-round differences, interquartile range in brackets)\n")
        print("| Spring Boot | CPU, with before | CPU, with | before - without | with - without | with - before |")
        print("|---|---:|---:|---:|---:|---:|")
        for line in LINES:
            w, o, b = line + " with", line + " without", line + " before"
            print("| %s | %d | %d | %s | %s | %s |" % (line, statistics.median(cpu[b]), statistics.median(cpu[w]),
                                                      spread(cpu[b], cpu[o]), spread(cpu[w], cpu[o]),
                                                      spread(cpu[w], cpu[b])))
        print("\nThe same rounds in process CPU (all threads, to exit; ms)\n")
        print("| Spring Boot | before - without | with - without | with - before | time to ready, with - before |")
        print("|---|---:|---:|---:|---:|")
        for line in LINES:
            w, o, b = line + " with", line + " without", line + " before"
            print("| %s | %s | %s | %s | %s |" % (line, spread(process[b], process[o]), spread(process[w], process[o]),
                                                 spread(process[w], process[b]), spread(ready[w], ready[b])))


def pairs(variants, contexts, jvms=4):
    """Per line, the 'with' variant started jvms times, each going on to start `contexts` further contexts in pairs
    (one of each pair with the starter's auto-configurations excluded): the median of the per-pair differences
    in main-thread CPU, the first third of each JVM's contexts left out while the JIT warms up."""
    print("\nA further context in the same JVM, with the starter's auto-configurations and without them "
          "(spring.autoconfigure.exclude), in pairs a few hundred ms apart (%d JVMs x %d contexts, the first third "
          "of each left out): main-thread CPU from run() to ApplicationReadyEvent, ms\n" % (jvms, contexts))
    print("| Spring Boot | pairs | with | excluded | with - excluded, median (interquartile range) |")
    print("|---|---:|---:|---:|---:|")
    for line in LINES:
        w, x, d = [], [], []
        for _ in range(jvms):
            run = subprocess.run(java(variants[line + " with"], "-Dstartup.again=%d" % contexts,
                                      "-Dstartup.pairs=true"),
                                 capture_output=True, text=True, cwd=ROOT, timeout=900)
            rows = re.findall(r"^AGAIN \d+ (\d+) (with|excluded)$", run.stdout, re.M)
            if run.returncode != 0 or len(rows) != contexts:
                sys.exit("start-up failed:\n" + run.stdout[-4000:] + run.stderr[-4000:])
            rows = rows[(contexts // 3) // 2 * 2:]
            for a, b in zip(rows[0::2], rows[1::2]):
                cw, ce = (int(a[0]), int(b[0])) if a[1] == "with" else (int(b[0]), int(a[0]))
                w.append(cw)
                x.append(ce)
                d.append(cw - ce)
        print("| %s | %d | %d | %d | %s |" % (line, len(d), statistics.median(w), statistics.median(x), spread(w, x)))
        sys.stdout.flush()


def spread(xs, ys):
    """The median of the per-round differences xs - ys, and their interquartile range."""
    d = [x - y for x, y in zip(xs, ys)]
    q = statistics.quantiles(d, n=4) if len(d) > 1 else [d[0]] * 3
    return "%+d (%+d to %+d)" % (statistics.median(d), q[0], q[2])


if __name__ == "__main__":
    main()
