#!/usr/bin/env bash
# demo.sh - `make demo`: kubectl cassandra on a simulated CassKop cluster, end to end.
#
#   1. builds the plugin (and puts it first on PATH, so `kubectl cassandra` runs it);
#   2. reuses a running hack/testenv control plane ($KTE_DIR, default /tmp/kcass-testenv),
#      or starts a private one (always with DEMO_LOCAL=1). The first start builds the
#      control plane from source: ~20 min on 2 cores, once; progress is shown;
#   3. creates a CassKop-shaped cluster: 1 DC, 1 rack, 4 nodes, with a simulated nodetool
#      behind `kubectl exec`;
#   4. runs `kubectl cassandra status`, a `scale --nodes 1 --yes` interrupted midway with
#      SIGINT (Ctrl-C), `kubectl cassandra resume --yes`, and `status` again;
#   5. tears down whatever it started (the control plane it started, or its namespace).
#
# Knobs: DEMO_LOCAL=1 (always a private control plane), DEMO_KEEP=1 (leave it running and
# print how to use and stop it), DEMO_DECOMMISSION_TIME (default 3s).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$PATH:/usr/local/go/bin"
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}" GOFLAGS="${GOFLAGS:--buildvcs=false}"
NS=cassandra-demo
CC=cassandra-demo
DECOM="${DEMO_DECOMMISSION_TIME:-3s}"

bold=$'\e[1m' dim=$'\e[2m' off=$'\e[0m'
if [ ! -t 1 ] || [ -n "${NO_COLOR:-}" ]; then bold='' dim='' off=''; fi
step=0
banner() {
  step=$((step + 1))
  printf '\n%s==== %d. %s%s\n' "$bold" "$step" "$*" "$off"
}
run() { # echo the command, then run it
  printf '%s$ %s%s\n' "$dim" "$*" "$off"
  "$@"
}

WORK="$(mktemp -d "${TMPDIR:-/tmp}/kcass-demo.XXXXXX")"
STARTED_ENV=""
CREATED_NS=""
PLUGIN_PID=""
cleanup() {
  local rc=$?
  if [ -n "$PLUGIN_PID" ]; then kill "$PLUGIN_PID" 2>/dev/null || true; fi
  if [ "${DEMO_KEEP:-0}" = 1 ]; then
    # shellcheck disable=SC2016 # a literal $PATH for the user to paste
    printf '\nDEMO_KEEP=1: left running. export KUBECONFIG=%s PATH=%s:$PATH\n' "$KUBECONFIG" "$WORK/bin"
    [ -n "$STARTED_ENV" ] && printf 'stop it with: KTE_DIR=%s %s/hack/testenv/down.sh\n' "$STARTED_ENV" "$ROOT"
    exit $rc
  fi
  if [ -n "$STARTED_ENV" ]; then
    echo "[demo] stopping the local control plane"
    KTE_DIR="$STARTED_ENV" "$ROOT/hack/testenv/down.sh" || true
  elif [ -n "$CREATED_NS" ]; then
    kubectl delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
  fi
  rm -rf "$WORK"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------ build
banner "Building kubectl-cassandra"
mkdir -p "$WORK/bin" "$WORK/exec-bin" "$WORK/sim"
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$WORK/bin/kubectl-cassandra" ./cmd/kubectl-cassandra)
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$WORK/bin/democluster" ./hack/democluster)
export PATH="$WORK/bin:$PATH"
echo "kubectl finds: $(kubectl plugin list 2>/dev/null | grep -m1 kubectl-cassandra)"

# ------------------------------------------------------------------ control plane
KTE_DIR_DEFAULT="${KTE_DIR:-/tmp/kcass-testenv}"
usable_env() { # a running hack/testenv environment whose kwok runs $1/exec-bin commands
  [ -s "$1/kubeconfig" ] && ls "$1"/pids/kwok.pid >/dev/null 2>&1 &&
    kubectl --kubeconfig "$1/kubeconfig" get --raw /readyz >/dev/null 2>&1
}
if [ "${DEMO_LOCAL:-0}" != 1 ] && usable_env "$KTE_DIR_DEFAULT"; then
  banner "Using the running local control plane in $KTE_DIR_DEFAULT"
  export KUBECONFIG="$KTE_DIR_DEFAULT/kubeconfig"
  EXEC_BIN="$KTE_DIR_DEFAULT/exec-bin" # on that kwok's PATH unless it was started with KTE_EXEC_PATH
else
  banner "Starting a local Kubernetes control plane (etcd, apiserver, controller-manager, scheduler, kwok)"
  if ! "$ROOT/hack/testenv/build.sh" --check >/dev/null; then
    echo "First run: building the control plane from source. This takes ~20 min on 2 cores, once;"
    echo "later runs start in ~15 s. Progress below."
  fi
  "$ROOT/hack/testenv/build.sh" >/dev/null
  # A free block of 6 ports (up.sh checks again).
  base=""
  for b in $(seq 31000 100 39900); do
    free=1
    for ((p = b; p < b + 6; p++)); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then free=0; break; fi
    done
    if [ $free = 1 ]; then base=$b; break; fi
  done
  [ -n "$base" ] || { echo "no free ports found" >&2; exit 1; }
  STARTED_ENV="$WORK/kte"
  EXEC_BIN="$WORK/exec-bin"
  # The control plane goes down with this script (a watchdog on its PID), unless DEMO_KEEP=1
  # asks to leave it running.
  owner=$$
  [ "${DEMO_KEEP:-0}" = 1 ] && owner=""
  KUBECONFIG="$(KTE_DIR="$STARTED_ENV" KTE_PORT_BASE=$base KTE_EXEC_PATH="$EXEC_BIN" KTE_OWNER_PID=$owner \
    "$ROOT/hack/testenv/up.sh")"
  export KUBECONFIG
fi
mkdir -p "$EXEC_BIN"
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$EXEC_BIN/nodetool" ./test/nodetool-sim)
cp "$EXEC_BIN/nodetool" "$EXEC_BIN/cqlsh.tmp" && mv "$EXEC_BIN/cqlsh.tmp" "$EXEC_BIN/cqlsh" # same binary, answers as cqlsh

# ------------------------------------------------------------------ cluster
banner "Creating a simulated CassKop cluster: $NS/$CC, 1 DC, 1 rack, 4 nodes (decommission takes $DECOM)"
if kubectl get namespace "$NS" >/dev/null 2>&1; then
  echo "namespace $NS exists already; delete it or set DEMO_LOCAL=1" >&2
  exit 1
fi
CREATED_NS=1
democluster create --namespace "$NS" --name "$CC" --nodes 4 --state-dir "$WORK/sim" --decommission-time "$DECOM"
run kubectl -n "$NS" get cassandracluster,statefulset,pods,pvc

banner "kubectl cassandra status"
run kubectl cassandra status -n "$NS" "$CC"

banner "kubectl cassandra scale --rack rack1 --nodes 1 --yes   (interrupted with Ctrl-C while the 2nd node leaves)"
printf '%s$ kubectl cassandra scale -n %s %s --dc dc1 --rack rack1 --nodes 1 --yes --poll-interval 1s &%s\n' "$dim" "$NS" "$CC" "$off"
# kubectl execs the plugin in place: $! is the plugin itself. --poll-interval: the default
# (5 s, one nodetool exec per read on a real cluster) would make the demo drag.
kubectl cassandra scale -n "$NS" "$CC" --dc dc1 --rack rack1 --nodes 1 --yes --poll-interval 1s &
PLUGIN_PID=$!
democluster wait-step --namespace "$NS" --name "$CC" --kind decommission --nth 2 --state-dir "$WORK/sim" >/dev/null
echo "[demo] sending SIGINT (Ctrl-C) to the plugin (pid $PLUGIN_PID)"
kill -INT "$PLUGIN_PID"
rc=0
wait "$PLUGIN_PID" || rc=$?
PLUGIN_PID=""
echo "[demo] the plugin exited with code $rc (4 = interrupted, checkpoint saved)"

banner "kubectl cassandra status   (the operation in flight, from the checkpoint annotation; the node keeps leaving)"
run kubectl cassandra status -n "$NS" "$CC"

banner "kubectl cassandra resume --yes"
run kubectl cassandra resume -n "$NS" "$CC" --yes --poll-interval 1s

banner "kubectl cassandra status   (done: 1 node left)"
run kubectl cassandra status -n "$NS" "$CC"
run kubectl -n "$NS" get statefulset,pods,pvc
echo
echo "${bold}demo finished${off}"
