#!/usr/bin/env bash
# Runs every libFuzzer target of BUILD (default build-fuzz) for FUZZ_SECONDS
# each (default 60), or only the targets named after BUILD. Seeds come from
# test/fuzz/corpus/<name>/ and test/fuzz/regressions/<name>/; new corpus
# entries go to BUILD/fuzz/corpus/<name>/ (not checked in). A crash, leak,
# sanitizer report or invariant failure stops the run: the input is saved to
# test/fuzz/regressions/<name>/ (check it in with the fix; make test replays
# it) and the script exits non-zero. Prints one line per target with its
# execution count.
set -u
cd "$(dirname "$0")/../.."
BUILD=${1:-build-fuzz}; shift || true
SECS=${FUZZ_SECONDS:-60}
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in test/fuzz/fuzz_*.c; do n=${f#test/fuzz/fuzz_}; names+=("${n%.c}"); done
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=0; total=0
for n in "${names[@]}"; do
  bin="$BUILD/fuzz/fuzz_$n"
  work="$BUILD/fuzz/corpus/$n"; art="$BUILD/fuzz/artifacts/$n/"
  mkdir -p "$work" "$art" "test/fuzz/regressions/$n"
  log="$BUILD/fuzz/$n.log"
  "$bin" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -dict=test/fuzz/json.dict -artifact_prefix="$art" -print_final_stats=1 \
    "$work" "test/fuzz/corpus/$n" "test/fuzz/regressions/$n" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  total=$((total + ${execs:-0}))
  if [ $rc -ne 0 ]; then
    failed=$((failed+1))
    for a in "$art"*; do
      [ -f "$a" ] || continue
      cp "$a" "test/fuzz/regressions/$n/"
      echo "FINDING $n: $(basename "$a") saved to test/fuzz/regressions/$n/"
    done
    grep -E "ERROR|runtime error|invariant failed|SUMMARY" "$log" | head -5
    echo "fuzz $n: FAILED after ${execs:-?} executions (log: $log)"
  else
    echo "fuzz $n: ${execs:-?} executions in ${SECS}s, no finding"
  fi
done
echo "fuzz: ${#names[@]} targets, $total executions, $failed with findings"
[ $failed -eq 0 ]
