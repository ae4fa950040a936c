#!/usr/bin/env bash
# Runs every unit test binary given as arguments, then every integration test
# (test/integration/test_*.py), and prints a closing "N passed, N failed" line
# counting test programs. Exits non-zero on any failure.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
export SCHEDEXT_BIN="$BUILD/schedext" SCHEDEXT_BUILD="$BUILD"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# test/tsan.supp: known-benign races in third-party code (cJSON's global
# error position); see the file for why each entry is there.
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/test/tsan.supp}
passed=0; failed=0; failures=()
run_one() {
  local name=$1; shift
  if "$@"; then passed=$((passed+1)); else failed=$((failed+1)); failures+=("$name"); fi
}
for t in "$@"; do
  run_one "$t" "$t"
done
for t in test/integration/test_*.py; do
  [ -e "$t" ] || continue
  run_one "$t" timeout 600 python3 "$t"
done
for f in "${failures[@]:-}"; do [ -n "$f" ] && echo "FAILED: $f"; done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
