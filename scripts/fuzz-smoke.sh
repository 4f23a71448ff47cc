#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each briefly on its seed
# corpus (tests/fuzz/corpus/<target>/). Usage: scripts/fuzz-smoke.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
targets=(fuzz_switch_program)

cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIBRA_FUZZ=ON \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined" >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]}"

for target in "${targets[@]}"; do
  corpus="tests/fuzz/corpus/${target#fuzz_}"
  work="$(mktemp -d)"
  cp "$corpus"/* "$work"/
  echo "fuzz-smoke: $target for ${seconds}s"
  "build-fuzz/tests/fuzz/$target" -max_total_time="$seconds" -max_len=600 "$work" >/dev/null 2>"$work.log" || {
    tail -40 "$work.log"; exit 1; }
  tail -1 "$work.log"
  rm -rf "$work" "$work.log"
done
