#!/usr/bin/env bash
# make perf-check: deterministic counters of the hot paths against the
# committed baseline (bench/perf-baseline.txt). A generated cluster of
# 1,000 nodes and 20,000 pods (bench/gen.py, seed 1), then
# bench/perf_check.c twice: natively for minor page faults and heap
# allocations per operation, and under valgrind's callgrind for user-space
# instructions per operation (this machine kind has no hardware counters
# for `perf stat`). bench/perf_compare.py prints the table and fails when
# a figure grows past the tolerance. UPDATE=1 rewrites the baseline
# instead: commit it on its own, saying why it changed.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
OUT=${PERF_OUT:-$BUILD/perf-check}
rm -rf "$OUT"
mkdir -p "$OUT/callgrind"

python3 bench/gen.py --nodes 1000 --pods 20000 --seed 1 --out "$OUT/cluster.json"
for mix in plain spread affinity anti-affinity; do
  python3 bench/gen.py --pending 40 --mix "$mix" --seed 1 --pending-out "$OUT/pending-$mix.json"
done
python3 bench/gen.py --pending 40 --mix volumes --seed 1 \
  --pending-out "$OUT/pending-volumes.json" --storage-out "$OUT/storage-volumes.json"
python3 bench/gen.py --nodes 1000 --pending 40 --mix dra --seed 1 \
  --pending-out "$OUT/pending-dra.json" --storage-out "$OUT/storage-dra.json"
python3 bench/payloads.py "$OUT/cluster.json" "$OUT/pending-plain.json" "$OUT" 500

"$BUILD/bench/perf_check" --data "$OUT" > "$OUT/native.txt"
valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind/callgrind.out" \
  --dump-line=no --compress-strings=no --combine-dumps=no \
  "$BUILD/bench/perf_check" --data "$OUT" > "$OUT/callgrind.txt" 2> "$OUT/valgrind.log" || {
  cat "$OUT/valgrind.log" >&2; exit 1; }
python3 bench/perf_compare.py --native "$OUT/native.txt" --callgrind "$OUT/callgrind" \
  --baseline bench/perf-baseline.txt --tolerance "${PERF_TOLERANCE:-25}" ${UPDATE:+--write}
