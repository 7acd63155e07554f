#!/usr/bin/env bash
# run.sh - `make bench`: how little time and load kubectl-cassandra adds, measured on a
# real local control plane (hack/testenv) with the simulated nodetool (test/sim).
#
# Builds the harness (test/bench/cmd/kcass-bench) and runs it on the plugin binary built
# by `make build`. The harness runs the engine micro-benchmarks first (go test -bench,
# raw output on stdout: benchstat can read it), then starts a PRIVATE control plane (its
# own KTE_DIR under $TMPDIR and free ports; up.sh's watchdog stops it if the harness
# dies), creates the clusters, measures, always tears the control plane down (also on
# Ctrl-C), prints one table and writes it as JSON.
#
# Usage: hack/bench/run.sh [harness flags]   e.g. -sizes 2,10 -memory-size 10 -skip-micro
#   BENCH_PLUGIN  plugin binary to measure   (default bin/kubectl-cassandra; built if missing)
#   BENCH_OUT     results JSON               (default bench/results.json, git-ignored)
# `hack/bench/run.sh -h` lists the harness flags (sizes, poll interval, decommission time…).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export PATH="$PATH:/usr/local/go/bin"
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}" GOFLAGS="${GOFLAGS:--buildvcs=false}"
cd "$ROOT"
PLUGIN="${BENCH_PLUGIN:-$ROOT/bin/kubectl-cassandra}"
OUT="${BENCH_OUT:-$ROOT/bench/results.json}"
if [ ! -x "$PLUGIN" ]; then
  make --no-print-directory build
fi
TMP="$(mktemp -d "${TMPDIR:-/tmp}/kcass-bench-bin.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
go build -o "$TMP/kcass-bench" ./test/bench/cmd/kcass-bench
start=$(date +%s)
rc=0
"$TMP/kcass-bench" -plugin "$PLUGIN" -out "$OUT" "$@" || rc=$?
echo "[bench] make bench took $(( $(date +%s) - start ))s (exit $rc)" >&2
exit $rc
