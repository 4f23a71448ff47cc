#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each briefly on a copy of
# its seed corpus (tests/fuzz/corpus/<target>/). Usage:
# scripts/fuzz-smoke.sh [SECONDS_PER_TARGET] [TARGET...]
# The default (4 s for each of the 9 targets, ~50 s with start-up) keeps the run within a
# minute; scripts/fuzz-long.sh is the long run.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/fuzz-common.sh
seconds="${1:-4}"
shift $(($# > 0 ? 1 : 0))
targets=("${fuzz_targets[@]}")
if (($# > 0)); then targets=("$@"); fi

fuzz_build "${targets[@]}"

for target in "${targets[@]}"; do
  corpus="$(fuzz_corpus_of "$target")"
  work="$(mktemp -d)"
  cp "$corpus"/* "$work"/
  echo "fuzz-smoke: $target for ${seconds}s"
  fuzz_exec "$target" "build-fuzz/tests/fuzz/$target" -max_total_time="$seconds" \
    -max_len="$fuzz_max_len" \
    -artifact_prefix="$work/" "$work" >/dev/null 2>"$work.log" || {
    tail -40 "$work.log"
    echo "fuzz-smoke: $target failed; the input is in $work/ (crash-*, leak-*, oom-*, timeout-*)"
    exit 1
  }
  tail -1 "$work.log"
  rm -rf "$work" "$work.log"
done
