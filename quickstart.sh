#!/usr/bin/env bash
# shardsim quick start. On a fresh Debian 12 machine, as root (or with sudo):
#   ./quickstart.sh          install what is missing, build the CLI and the Python module,
#                            simulate scenarios/quickstart.yaml
#   ./quickstart.sh test     install what is missing, build, run the whole test suite (ctest)
#   ./quickstart.sh asan     the test suite built with AddressSanitizer + UndefinedBehaviorSanitizer
#   ./quickstart.sh fuzz [S] the libFuzzer harnesses (clang-14), S seconds each (default 30)
set -euo pipefail
cd "$(dirname "$0")"
mode="${1:-run}"

packages=(build-essential cmake pkg-config libyaml-cpp-dev libtbb-dev libboost-graph-dev
          libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev libfmt-dev
          python3-dev pybind11-dev)
# The test suite renders the HTML reports in headless Chromium (tests/html/browser_test.cc) and
# runs the Python module's tests with pytest (tests/python/, pandas for SweepResult.to_pandas);
# CI also checks the formatting with clang-format (tests/format/check_format.sh).
if [ "$mode" = test ]; then
  packages+=(chromium python3-pytest python3-pandas clang-format)
fi
if [ "$mode" = fuzz ]; then
  packages+=(clang-14 libfuzzer-14-dev)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

jobs=2
case "$mode" in
  run)
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSHARDSIM_BUILD_TESTS=OFF -DSHARDSIM_BUILD_BENCH=OFF
    cmake --build build -j"$jobs" --target shardsim shardsim_python  # the CLI, `import shardsim`
    ./build/shardsim simulate scenarios/quickstart.yaml
    ;;
  test)
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSHARDSIM_BUILD_TESTS=ON -DSHARDSIM_BUILD_BENCH=ON
    cmake --build build -j"$jobs"
    (cd build && ctest --output-on-failure -j"$jobs")
    ;;
  asan)
    # -O1 -g1 (ASan's advice; line tables for the reports' stacks) builds in about 60% of the
    # time -O2 -g takes, which keeps CI well inside its limit.
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1 -g1 -DNDEBUG" \
          -DSHARDSIM_SANITIZE=ON -DSHARDSIM_BUILD_TESTS=ON -DSHARDSIM_BUILD_BENCH=OFF
    cmake --build build-asan -j"$jobs"
    (cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j"$jobs")
    ;;
  fuzz)
    tests/fuzz/run_fuzzers.sh "${2:-30}"
    ;;
  *)
    echo "usage: $0 [run|test|asan|fuzz [SECONDS]]" >&2
    exit 2
    ;;
esac
