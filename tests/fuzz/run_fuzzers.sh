#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang-14, ASan + UBSan, in build-fuzz/) and runs each for a
# bounded time; fails on the first finding. Usage:
#   tests/fuzz/run_fuzzers.sh [SECONDS_PER_TARGET] [TARGET...]     (default 30 s, every target)
# Each run starts from the seeds (tests/fuzz/corpus/<target>/ plus the shipped files of its
# kind) and the regressions; new inputs go to build-fuzz/corpus/<target>/, findings to
# build-fuzz/findings/ (crash-*, timeout-*, oom-*). A finding, once fixed, is copied to
# tests/fuzz/regressions/<target>/, where the test suite replays it (fuzz_replay_test.cc).
# Limits per input: 10 s (-timeout) and 2 GiB resident (-rss_limit_mb: ASan's own overhead over
# the 1 GB bound), one allocation at most 1 GiB (-malloc_limit_mb).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-30}"
shift || true
all=(scenario model hardware topology hf_json sweep claim gemm_csv merge_csv)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")
jobs="${SHARDSIM_FUZZ_JOBS:-2}"
# A fixed seed (SHARDSIM_FUZZ_SEED to vary it): the same mutations on every run, so a bounded CI
# run explores what a run here explored, and a finding reproduces.
seed="${SHARDSIM_FUZZ_SEED:-1}"

CXX="${CXX:-clang++-14}" cmake -S . -B build-fuzz -DSHARDSIM_FUZZ=ON -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_CXX_FLAGS="-O1" -DSHARDSIM_BUILD_TESTS=OFF -DSHARDSIM_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz -j"$jobs" --target $(printf 'fuzz_%s ' "${targets[@]}")

seeds() {  # the shipped files a target's seeds come from, beside tests/fuzz/corpus/<target>/
  case "$1" in
    scenario|sweep) echo scenarios tests/sweep/data ;;
    model) echo models ;;
    hardware) echo hardware ;;
    topology) echo topologies ;;
    hf_json) echo tests/data/hf ;;
    gemm_csv) echo bench/h200/results ;;
    *) ;;
  esac
}

mkdir -p build-fuzz/findings
status=0
for t in "${targets[@]}"; do
  corpus="build-fuzz/corpus/$t"
  mkdir -p "$corpus"
  dirs=("$corpus" "tests/fuzz/corpus/$t")
  [ -d "tests/fuzz/regressions/$t" ] && dirs+=("tests/fuzz/regressions/$t")
  for d in $(seeds "$t"); do [ -d "$d" ] && dirs+=("$d"); done
  dict=()
  [ -f "tests/fuzz/dict/$t.dict" ] && dict=(-dict="tests/fuzz/dict/$t.dict")
  log="build-fuzz/findings/$t.log"
  echo "fuzzing $t for ${seconds}s"
  if ! ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
       "build-fuzz/tests/fuzz/fuzz_$t" "${dict[@]}" -seed="$seed" -max_total_time="$seconds" -timeout=10 \
       -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=65536 -print_final_stats=1 \
       -artifact_prefix="build-fuzz/findings/$t-" "${dirs[@]}" >"$log" 2>&1; then
    echo "FINDING in $t (log: $log):" >&2
    grep -E "ERROR|SUMMARY|Test unit written|timeout|out-of-memory" "$log" | head -20 >&2
    status=1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$log" | sed "s/^/  $t: /"
done
exit "$status"
