#!/usr/bin/env bash
# Runs test classes of one module N times in a row in one JVM (after compiling the module and its tests),
# one line per class and run, e.g.:
#   scripts/repeat-tests.sh retry-core 30 io.github.grpcretry.attempt.HedgingConcurrencyTest io.github.grpcretry.attempt.ConcurrencyTest
# Exits non-zero when any run failed.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 3 ]; then
  echo "usage: $0 <module> <runs> <test class>..." >&2
  exit 2
fi
module=$1 runs=$2
shift 2
cp_file=$module/target/repeat-tests.classpath
# One reactor build: the upstream modules (retry-core, its test-jar) resolve to their target/ folders, so
# this works for every module without installing anything. Each module writes its classpath to the same
# file in reactor order; the module asked for comes last.
./mvnw -B -q -pl "$module" -am test-compile dependency:build-classpath -Djacoco.skip=true \
  -Dmdep.includeScope=test -Dmdep.outputFile="$PWD/$cp_file"
# The JUnit Platform launcher that matches the module's junit-platform-engine.
engine_jar=$(tr ':' '\n' < "$cp_file" | grep '/junit-platform-engine-' | head -1)
version=$(basename "$engine_jar" .jar | sed 's/^junit-platform-engine-//')
launcher_jar=$HOME/.m2/repository/org/junit/platform/junit-platform-launcher/$version/junit-platform-launcher-$version.jar
if [ ! -f "$launcher_jar" ]; then
  ./mvnw -B -q dependency:get -Dartifact="org.junit.platform:junit-platform-launcher:$version"
fi
classpath="$module/target/test-classes:$module/target/classes:$(cat "$cp_file"):$launcher_jar"
out=$module/target/repeat-tests
mkdir -p "$out"
javac -d "$out" -cp "$classpath" scripts/RepeatTests.java
exec java -cp "$classpath:$out" RepeatTests "$runs" "$@"
