# Sourced by fuzz-smoke.sh and fuzz-long.sh: the fuzz targets and how they
# are built (clang, libFuzzer, ASan + UBSan, in build-fuzz/).
# The corpus of fuzz_<name> is tests/fuzz/corpus/<name>/.
fuzz_targets=(
  fuzz_switch_program
  fuzz_hot_replica
  fuzz_hotpath_receive
  fuzz_message_codec
  fuzz_hotpath_messages
  fuzz_control_handler
  fuzz_hot_set_file
  fuzz_text_parsers
  fuzz_dataset_cache
)
# No input of any target needs more (a hot-path datagram is at most 532 bytes).
fuzz_max_len=2048
# UBSan findings must stop the run like ASan's do.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

fuzz_build() {
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIBRA_FUZZ=ON \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined" >/dev/null
  cmake --build build-fuzz -j"${FUZZ_BUILD_JOBS:-$(nproc)}" --target "$@"
}

fuzz_corpus_of() { echo "tests/fuzz/corpus/${1#fuzz_}"; }

# Runs a target's command. fuzz_hotpath_receive counts every datagram its
# sockets receive, so a stray datagram from another process on loopback (a
# test running meanwhile) would break its model of the protocol: as root it
# runs in a network namespace of its own, with only a loopback device.
fuzz_exec() {
  local target="$1"
  shift
  if [[ "$target" == fuzz_hotpath_receive && $EUID -eq 0 ]] && command -v ip >/dev/null; then
    local ns="libra-fuzz-$$-$RANDOM" status=0
    if ip netns add "$ns" 2>/dev/null; then
      ip netns exec "$ns" ip link set lo up
      ip netns exec "$ns" "$@" || status=$?
      ip netns del "$ns"
      return $status
    fi
  fi
  "$@"
}
