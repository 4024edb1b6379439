#!/bin/sh
# Runs the libFuzzer targets (FUZZ_BIN: the folder of the executables; `make fuzz` builds them
# optimized into .build/fuzz/release, `make asan-build` beside the tests into .build/asan/debug,
# the default): each for FUZZ_SECONDS,
# one job, niced, from its checked-in seed corpus (Fuzz/corpus/<target>, which also holds every
# input that once crashed, as regression-*) and its dictionary (Fuzz/dict/<target>.dict). New
# interesting inputs go to the git-ignored working corpus .build/fuzz-corpus/<target>, a crash to
# .build/fuzz-artifacts/. Prints the executions per target and their sum; fails on any crash.
# Usage: Fuzz/run.sh [target…]   (all targets when none is named)
set -u
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
bin=${FUZZ_BIN:-.build/asan/debug}
targets=${*:-$(cat Fuzz/targets)}
# FUZZ_WORK_CORPUS: where new inputs go (make fuzz-test uses a fresh one, so that make test
# starts from the checked-in seeds alone).
work=${FUZZ_WORK_CORPUS:-.build/fuzz-corpus}
mkdir -p "$work" .build/fuzz-artifacts .build/fuzz-logs
total=0
failed=""
for target in $targets; do
  corpus=$work/$target
  mkdir -p "$corpus"
  dict=""
  [ -f "Fuzz/dict/$target.dict" ] && dict="-dict=Fuzz/dict/$target.dict"
  log=.build/fuzz-logs/$target.log
  # The Swift runtime's own crash reporter would hold the process for a symbolicated backtrace:
  # libFuzzer's and AddressSanitizer's reports say enough. Leaks are not checked (the runtime's
  # allocations that live until exit would be reported).
  SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 \
    nice -n 10 "$bin/fuzz-$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -jobs=0 \
      -print_final_stats=1 -artifact_prefix=".build/fuzz-artifacts/$target-" $dict \
      "$corpus" "Fuzz/corpus/$target" >"$log" 2>&1
  status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  runs=${runs:-0}
  total=$((total + runs))
  if [ $status -ne 0 ]; then
    failed="$failed $target"
    printf '%-18s %12s executions  CRASH (exit %s), see %s\n' "$target" "$runs" "$status" "$log"
    grep -E 'fuzz property failed|ERROR: |SUMMARY|Test unit written' "$log" | head -n 5
  else
    printf '%-18s %12s executions\n' "$target" "$runs"
  fi
  printf '%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$target" "$runs" "$status" >>.build/fuzz-logs/history.tsv
done
printf '%-18s %12s executions\n' "total" "$total"
[ -z "$failed" ] || { echo "fuzz: crashes in:$failed" >&2; exit 1; }
