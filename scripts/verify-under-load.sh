#!/usr/bin/env bash
# Runs the build that CI runs (./mvnw -B verify) several times in a row while a CPU hog keeps every
# core busy, and reports each run's result and duration. Exits 1 when any run failed.
#
# Usage: scripts/verify-under-load.sh [RUNS]        (RUNS defaults to 5)
#
# Environment (all optional):
#   MVN_CMD      what each run executes, through bash -c (default: ./mvnw -B verify). For trying the
#                script itself without a build: MVN_CMD=true, MVN_CMD=false, MVN_CMD='sleep 2'.
#   HOG          stress-ng | burner | none (default: stress-ng). stress-ng is installed with apt-get
#                when it is missing and apt-get can run; otherwise the script falls back to burner,
#                one shell busy loop per worker.
#   HOG_WORKERS  how many CPU workers the hog runs (default: the number of cores, nproc).
#   LOG_DIR      where each run's output goes (default: target/verify-under-load).
#
# The hog and each run live in process groups of their own; both are killed, with everything they
# started, when the script exits for any reason (end, failure, Ctrl-C, kill). Docs: docs/reliability.md, "Under load".
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-5}
if ! [[ $runs =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 [RUNS]  (RUNS: a whole number >= 1, got '$runs')" >&2
  exit 2
fi
mvn_cmd=${MVN_CMD:-./mvnw -B verify}
hog=${HOG:-stress-ng}
workers=${HOG_WORKERS:-$(nproc)}
log_dir=${LOG_DIR:-target/verify-under-load}
if ! [[ $workers =~ ^[1-9][0-9]*$ ]]; then
  echo "HOG_WORKERS must be a whole number >= 1, got '$workers'" >&2
  exit 2
fi

hog_pids=()
build_pid=""

stop_build() {
  if [[ -n $build_pid ]]; then
    # the build runs in its own process group: end it with Maven's forked test JVMs
    kill -TERM -- "-$build_pid" 2>/dev/null || kill -TERM "$build_pid" 2>/dev/null || true
    wait "$build_pid" 2>/dev/null || true
    build_pid=""
  fi
}

stop_hog() {
  local pid
  for pid in "${hog_pids[@]}"; do
    # each hog was started as the leader of its own process group: end the group (stress-ng's workers,
    # a burner's loop), then reap it
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${hog_pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if ((${#hog_pids[@]} > 0)); then
    echo "load: hog stopped (pid ${hog_pids[*]})"
  fi
  hog_pids=()
}
trap 'stop_build; stop_hog' EXIT
trap 'echo "interrupted: stopping the run and the hog" >&2; exit 130' INT TERM

ensure_stress_ng() {
  command -v stress-ng >/dev/null 2>&1 && return 0
  if command -v apt-get >/dev/null 2>&1 && [[ $(id -u) -eq 0 ]]; then
    echo "load: installing stress-ng (apt-get)"
    if (apt-get install -y -qq stress-ng >/dev/null 2>&1 \
        || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq stress-ng >/dev/null 2>&1; }); then
      command -v stress-ng >/dev/null 2>&1 && return 0
    fi
  fi
  return 1
}

start_hog() {
  case $hog in
    stress-ng)
      if ensure_stress_ng; then
        setsid stress-ng --cpu "$workers" --timeout 0 --quiet &
        hog_pids+=("$!")
        hog_desc="stress-ng --cpu $workers"
        return
      fi
      echo "load: stress-ng is not available and cannot be installed; using the shell burner" >&2
      hog=burner
      start_hog
      ;;
    burner)
      local i
      for ((i = 0; i < workers; i++)); do
        setsid bash -c 'while :; do :; done' &
        hog_pids+=("$!")
      done
      hog_desc="$workers shell busy loop(s)"
      ;;
    none)
      hog_desc="none"
      ;;
    *)
      echo "HOG must be stress-ng, burner or none, got '$hog'" >&2
      exit 2
      ;;
  esac
}

hog_alive() {
  local pid
  for pid in "${hog_pids[@]}"; do
    kill -0 "$pid" 2>/dev/null || return 1
  done
  return 0
}

mkdir -p "$log_dir"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n $(git status --porcelain 2>/dev/null) ]]; then
  commit="$commit (with uncommitted changes)"
fi
hog_desc=""
start_hog

echo "verify under load: $runs run(s) of '$mvn_cmd'"
echo "  date $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit, $(nproc) core(s), load: $hog_desc"
echo "  logs in $log_dir/"

results=()
failed=0
for ((run = 1; run <= runs; run++)); do
  if ! hog_alive; then
    echo "load: the hog died before run $run; restarting it" >&2
    stop_hog
    start_hog
  fi
  log="$log_dir/run-$run.log"
  started=$(date +%s)
  # in the background and in its own process group, so that a signal to this script ends it at once
  setsid bash -c "$mvn_cmd" >"$log" 2>&1 </dev/null &
  build_pid=$!
  if wait "$build_pid"; then
    result=PASS
  else
    result=FAIL
    failed=$((failed + 1))
  fi
  build_pid=""
  seconds=$(($(date +%s) - started))
  line=$(printf 'run %d/%d: %s in %dm%02ds (%s)' "$run" "$runs" "$result" $((seconds / 60)) $((seconds % 60)) "$log")
  echo "$line"
  results+=("$line")
  if [[ $result == FAIL ]]; then
    # what Maven and Surefire said about the failure, if anything
    grep -E '^\[ERROR\] (Tests run:|Failures:|  [A-Za-z0-9_.$]+[.:]|Failed to execute)' "$log" | head -n 15 | sed 's/^/    /' || true
  fi
done

stop_hog
echo
echo "summary ($(date -u '+%Y-%m-%d'), commit $commit, load: $hog_desc):"
printf '  %s\n' "${results[@]}"
if ((failed > 0)); then
  echo "$failed of $runs run(s) failed"
  exit 1
fi
echo "all $runs run(s) passed"
