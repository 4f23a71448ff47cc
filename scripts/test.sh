#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite:
#   1. release build (-O2, warnings on): every test (unit + multi-process),
#      then the runtime's multi-process tests twice more to catch races;
#   2. every fuzz target for a few seconds (clang + libFuzzer, under a minute);
#   3. debug build with ASan/UBSan: the unit tests, and the hot path's
#      multi-process tests of PS-lite programs (every node, the switch and
#      the control plane under the sanitizers; under a minute).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs" --timeout 300
ctest --test-dir build --output-on-failure -j"$jobs" --timeout 300 -R '^Runtime/PsJob' \
  --repeat until-fail:2

scripts/fuzz-smoke.sh

cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLIBRA_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
ctest --test-dir build-asan -L unit --output-on-failure -j"$jobs" --timeout 300
ctest --test-dir build-asan -LE unit --output-on-failure -j"$jobs" --timeout 300 \
  -R 'HotPath(Job|Loss|Sampling|CustomersAsWorkers|File|Uneven|Fallback|Sums)'
