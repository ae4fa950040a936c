#!/usr/bin/env bash
# make bench: builds a synthetic cluster, runs the in-process and HTTP
# benchmarks and prints one `bench <metric> <value> <unit> key=value...`
# line per figure at the end. QUICK=1 uses a smaller cluster (< 2 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BIN=$BUILD/schedext
OUT=${BENCH_OUT:-$BUILD/bench-data}
mkdir -p "$OUT"
if [ -n "${QUICK:-}" ]; then NODES=5000; PODS=150000; PENDING=300; DUR=3; else NODES=5000; PODS=150000; PENDING=2000; DUR=10; fi
# End to end against the fake API server (bench/e2e.py): the issue's 5000
# nodes in both runs; QUICK binds 3000 pending pods instead of 10,000.
if [ -n "${QUICK:-}" ]; then E2E_NODES=5000; E2E_PENDING=3000; W_PODS=3000; W_UPDATES=10000
else E2E_NODES=5000; E2E_PENDING=10000; W_PODS=20000; W_UPDATES=50000; fi
NODES=${BENCH_NODES:-$NODES}; PODS=${BENCH_PODS:-$PODS}
RESULTS=$OUT/results.txt; : > "$RESULTS"
say() { echo "$*" | tee -a "$RESULTS"; }

command -v wrk >/dev/null || { SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo; $SUDO apt-get install -y -qq wrk >/dev/null; }

cores=$(nproc); model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//; s/ /_/g')
say "bench machine $cores cores model=$model"

echo "generating $NODES nodes / $PODS pods ..." >&2
python3 bench/gen.py --nodes "$NODES" --pods "$PODS" --seed 1 --out "$OUT/cluster.json"
for mix in plain spread affinity anti-affinity; do
  python3 bench/gen.py --pending "$PENDING" --mix "$mix" --seed 1 --pending-out "$OUT/pending-$mix.json"
done
python3 bench/gen.py --pending "$PENDING" --mix volumes --seed 1 \
  --pending-out "$OUT/pending-volumes.json" --storage-out "$OUT/storage-volumes.json"
python3 bench/gen.py --nodes "$NODES" --pending "$PENDING" --mix dra --seed 1 \
  --pending-out "$OUT/pending-dra.json" --storage-out "$OUT/storage-dra.json"

"$BUILD/bench/cycle_bench" --state "$OUT/cluster.json" | tee -a "$RESULTS"
for mix in plain spread affinity anti-affinity; do
  "$BUILD/bench/cycle_bench" --state "$OUT/cluster.json" --pending "$OUT/pending-$mix.json" \
    --label "$mix" --threads "$cores" | tee -a "$RESULTS"
done
# 30% of the pods with claims (half bound zonal PVs, half WaitForFirstConsumer);
# target: at least 70% of cycle_plain's rate.
"$BUILD/bench/cycle_bench" --state "$OUT/cluster.json" --extra-state "$OUT/storage-volumes.json" \
  --pending "$OUT/pending-volumes.json" --label volumes --threads "$cores" | tee -a "$RESULTS"
# Every pod claims one of 40,000 GPUs (5000 nodes x 8 devices x 6 attributes)
# by a CEL selector on two attributes; target: at least 50% of cycle_plain.
"$BUILD/bench/cycle_bench" --state "$OUT/cluster.json" --extra-state "$OUT/storage-dra.json" \
  --pending "$OUT/pending-dra.json" --label dra --threads "$cores" | tee -a "$RESULTS"

# The volumes target measured the way it is stated: the mix beside plain,
# back to back in one process, ROUNDS rounds, the median ratio
# (cycle_bench --compare; the machine's drift between two processes a
# minute apart otherwise swings the ratio by tens of percent). Not for
# dra: its claims stay allocated in the cache after a run's pods are
# forgotten, so a second round would not be the same work.
ROUNDS=${BENCH_ROUNDS:-5}; [ -n "${QUICK:-}" ] && ROUNDS=${BENCH_ROUNDS:-3}
"$BUILD/bench/cycle_bench" --state "$OUT/cluster.json" --extra-state "$OUT/storage-volumes.json" \
  --pending "$OUT/pending-plain.json" --label plain --compare "$OUT/pending-volumes.json" \
  --compare-label volumes --rounds "$ROUNDS" --threads "$cores" | tee -a "$RESULTS"

# Opportunistic batching: a Deployment-like workload (PENDING pods of one
# template, host port 8080: one per node) at 5,000 nodes, batching off then
# on, ROUNDS rounds back to back (emulated 1.35 with PodTopologySpread's
# default constraints cleared: the default profile signs no pod, see
# docs/ARCHITECTURE.md "Opportunistic batching").
"$BUILD/bench/cycle_bench" --state "$OUT/cluster.json" --homogeneous "$PENDING" \
  --rounds "$ROUNDS" --threads "$cores" | tee -a "$RESULTS"
# The same with the default profile of the default release, which signs no
# pod: what batching costs where it cannot help (hint_used=0).
"$BUILD/bench/cycle_bench" --state "$OUT/cluster.json" --homogeneous "$PENDING" --default-profile \
  --rounds "$ROUNDS" --threads "$cores" | tee -a "$RESULTS"
# DRA with partitionable devices and extended resources at 1,000 nodes:
# half the pods claim a 40Gi partition of a GPU (each node: two GPUs as a
# whole device and two halves over shared counters, a pool of two slices),
# half ask example.com/gpu, served by DRA through the DeviceClass; beside
# plain on the same 1,000-node cluster, back to back (each round a fresh
# configuration, so the claims tracker starts empty and every round does
# the same work). Target: at least half of plain's rate.
python3 bench/gen.py --nodes 1000 --pods 20000 --seed 1 --out "$OUT/cluster-1k.json"
python3 bench/gen.py --pending "$PENDING" --mix plain --seed 1 --pending-out "$OUT/pending-plain-1k.json"
python3 bench/gen.py --nodes 1000 --pending "$PENDING" --mix dra-partitionable --seed 1 \
  --pending-out "$OUT/pending-dra-partitionable.json" --storage-out "$OUT/storage-dra-partitionable.json"
"$BUILD/bench/cycle_bench" --state "$OUT/cluster-1k.json" --extra-state "$OUT/storage-dra-partitionable.json" \
  --pending "$OUT/pending-plain-1k.json" --label plain --compare "$OUT/pending-dra-partitionable.json" \
  --compare-label dra_partitionable --rounds "$ROUNDS" --threads "$cores" | tee -a "$RESULTS"

# Queueing hints: pods moved out of unschedulablePods per node event, with
# 5,000 pods rejected by NodeResourcesFit (before the hints: all of them).
"$BUILD/bench/requeue_bench" --pods 5000 | tee -a "$RESULTS"

# The pod-group cycle (GenericWorkload): attempt time at 5,000 nodes for
# gangs of 3, as upstream's scheduler_perf gang workloads (thresholds 8 /
# 10 / 12 ms at 1,000 / 2,000 / 3,000 gangs), and gang pods/s beside plain.
GANGS="1000 2000 3000"; [ -n "${QUICK:-}" ] && GANGS=1000
for g in $GANGS; do "$BUILD/bench/gang_bench" --nodes 5000 --gangs "$g" | tee -a "$RESULTS"; done

# HTTP extender verbs over loopback, driven by wrk.
python3 bench/payloads.py "$OUT/cluster.json" "$OUT/pending-plain.json" "$OUT" 500
PORT=18899
"$BIN" serve --state "$OUT/cluster.json" --listen 127.0.0.1:$PORT --threads "$cores" >"$OUT/serve.log" 2>&1 &
SPID=$!
trap 'kill $SPID 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.5; done
run_wrk() { # verb body label conns
  local verb=$1 body=$2 label=$3 conns=$4 out
  out=$(BODY="$body" ${PIN:-} wrk -t1 -c"$conns" -d"${DUR}s" --latency -s bench/post.lua "http://127.0.0.1:$PORT/$verb" 2>&1)
  local rps p50 p99 non2xx
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  p50=$(echo "$out" | awk '$1=="50%" {print $2}')
  p99=$(echo "$out" | awk '$1=="99%" {print $2}')
  non2xx=$(echo "$out" | awk '/Non-2xx/ {print $4}')
  say "bench http_${verb}_${label} $rps req/s p50=$p50 p99=$p99 concurrency=$conns nodes=$NODES pods=$PODS errors=${non2xx:-0}"
}
for c in 1 16; do
  run_wrk filter "$OUT/names.json" names500 $c
  run_wrk prioritize "$OUT/names.json" names500 $c
  run_wrk filter "$OUT/nodes.json" fullnodes500 $c
done
# Concurrency 1 again with the server and wrk on one CPU: on a VM, waking
# the other idle vCPU for each request and reply costs ~50 us, which the
# unpinned p50 includes; this line shows the request's own cost.
if [ "$cores" -gt 1 ] && command -v taskset >/dev/null; then
  taskset -a -p 1 $SPID >/dev/null
  PIN="taskset -c 0"
  run_wrk filter "$OUT/names.json" names500_onecpu 1
  run_wrk prioritize "$OUT/names.json" names500_onecpu 1
  PIN=
fi
kill $SPID 2>/dev/null || true

# End to end against test/fakeapi/fakeapi.py: standalone pending -> bound,
# and watch events reaching the cache in extender mode.
python3 bench/gen.py --nodes "$E2E_NODES" --pods "$W_PODS" --seed 1 --out "$OUT/e2e-cluster.json"
python3 bench/gen.py --pending "$E2E_PENDING" --mix plain --seed 1 --pending-out "$OUT/pending-e2e.json"
python3 bench/e2e.py standalone "$BIN" "$OUT/e2e-cluster.json" "$OUT/pending-e2e.json" "$E2E_NODES" | tee -a "$RESULTS"
python3 bench/e2e.py watch "$BIN" "$OUT/e2e-cluster.json" "$E2E_NODES" "$W_PODS" "$W_UPDATES" | tee -a "$RESULTS"
# Standalone at several sizes on 1,000 nodes (bench/e2e.py scale): pods/s
# from start and from the first binding, CPU, peak RSS, requests per pod
# by verb, last binding to last Scheduled event; scale_flatness compares
# the largest size with the smallest. KUBE_SCHEDULER=PATH runs a
# kube-scheduler binary the same way on the same fake API server.
SCALE_SIZES=1000,6000,20000; [ -n "${QUICK:-}" ] && SCALE_SIZES=2000,6000
python3 bench/gen.py --pending 20000 --mix plain --seed 1 --pending-out "$OUT/pending-scale.json"
python3 bench/e2e.py scale "$BIN" "$OUT/e2e-cluster.json" "$OUT/pending-scale.json" 1000 "$SCALE_SIZES" \
  ${KUBE_SCHEDULER:+--scheduler "$KUBE_SCHEDULER"} | tee -a "$RESULTS"
# Operator tools: what-if --scale and pending at 5,000 nodes (bench/ops.py).
python3 bench/ops.py "$BIN" "$OUT" | tee -a "$RESULTS"
# Memory: peak/steady RSS, threads, malloc arenas; 5 runs each
# (QUICK: 3), min/median/max.
MEM_RUNS=5; [ -n "${QUICK:-}" ] && MEM_RUNS=3
python3 bench/mem.py "$BIN" "$OUT/cluster.json" 5000 5000 "$MEM_RUNS" | tee -a "$RESULTS"
echo
echo "==== figures ===="
cat "$RESULTS"
# Beside the last committed figures (bench/last-results.txt: copy
# $RESULTS there and commit it when a change moves them on purpose).
echo
echo "==== against bench/last-results.txt (committed) ===="
python3 bench/compare_last.py "$RESULTS" bench/last-results.txt
