#!/usr/bin/env bash
# The long fuzzing run (a bench command, not part of CI): builds every fuzz
# target, runs each for MINUTES (default 10) in one job with one worker,
# merges the inputs that found new coverage back into
# tests/fuzz/corpus/<name>/ (-merge=1 keeps only those, and the found inputs
# of earlier runs are minimised again with them, so the corpus stays small;
# the named seeds are always kept), and writes build-fuzz/fuzz-long.json: per target the seconds run,
# runs executed, corpus size after the merge and the crashes found (inputs
# kept under build-fuzz/fuzz-long/<target>/). Exits 1 if any target crashed.
# Usage: scripts/fuzz-long.sh [MINUTES] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/fuzz-common.sh
minutes="${1:-10}"
shift $(($# > 0 ? 1 : 0))
targets=("${fuzz_targets[@]}")
if (($# > 0)); then targets=("$@"); fi
seconds=$((minutes * 60))

fuzz_build "${targets[@]}"

root="$PWD"
out="build-fuzz/fuzz-long"
summary="build-fuzz/fuzz-long.json"
rm -rf "$out"
mkdir -p "$out"
entries=()
failed=0
for target in "${targets[@]}"; do
  corpus="$root/$(fuzz_corpus_of "$target")"
  work="$root/$out/$target"
  mkdir -p "$work/new" "$work/crashes"
  echo "fuzz-long: $target for ${minutes} min"
  start=$(date +%s)
  # -jobs=1 runs the fuzzer in a child whose log is fuzz-0.log in the cwd.
  (cd "$work" && fuzz_exec "$target" "$root/build-fuzz/tests/fuzz/$target" -max_total_time="$seconds" \
    -jobs=1 -workers=1 -max_len="$fuzz_max_len" -print_final_stats=1 \
    -artifact_prefix="$work/crashes/" "$work/new" "$corpus" >/dev/null 2>&1) || true
  elapsed=$(($(date +%s) - start))
  log="$work/fuzz-0.log"
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" 2>/dev/null | tail -1 |
    grep -o '[0-9]*$' || true)
  crashes=$(find "$work/crashes" -type f | wc -l)
  # Minimise: the named files (seeds from make_fuzz_seeds, crash regressions)
  # stay; of the fuzzer-found ones (named by their SHA-1), old and new, only
  # those that add coverage to the named ones and to each other are kept.
  mkdir -p "$work/keep" "$work/found"
  for file in "$corpus"/*; do
    if [[ "$(basename "$file")" =~ ^[0-9a-f]{40}$ ]]; then
      cp "$file" "$work/found/"
    else
      cp "$file" "$work/keep/"
    fi
  done
  # Edges only (-use_counters=0): hit counts would keep a thousand inputs of
  # the JSON parser where a few hundred cover the same code.
  if "$root/build-fuzz/tests/fuzz/$target" -merge=1 -use_counters=0 -max_len="$fuzz_max_len" \
    "$work/keep" "$work/found" "$work/new" >"$work/merge.log" 2>&1; then
    find "$corpus" -type f -regextype posix-extended -regex '.*/[0-9a-f]{40}' -delete
    find "$work/keep" -type f -regextype posix-extended -regex '.*/[0-9a-f]{40}' \
      -exec cp {} "$corpus/" \;
  else
    echo "fuzz-long: merging $target failed (see $work/merge.log); corpus left as it was"
  fi
  size=$(find "$corpus" -type f | wc -l)
  echo "fuzz-long: $target: ${runs:-0} runs in ${elapsed}s, corpus $size files, $crashes crashes"
  if ((crashes > 0)); then
    failed=1
    echo "fuzz-long: $target crashed; inputs in $work/crashes/, log in $log"
  fi
  entries+=("{\"target\": \"$target\", \"seconds\": $elapsed, \"runs\": ${runs:-0}, \"corpus_size\": $size, \"crashes\": $crashes}")
done
{
  echo "["
  for i in "${!entries[@]}"; do
    sep=","
    ((i == ${#entries[@]} - 1)) && sep=""
    echo "  ${entries[$i]}$sep"
  done
  echo "]"
} >"$summary"
echo "fuzz-long: summary in $summary"
exit "$failed"
