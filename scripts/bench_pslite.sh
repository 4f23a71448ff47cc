#!/usr/bin/env bash
# PS-lite's own benchmark program, side by side on PS-lite and on Libra.
#
#   scripts/bench_pslite.sh PSLITE_SOURCE_DIR
#
# PSLITE_SOURCE_DIR: a PS-lite source tree (github.com/dmlc/ps-lite, e.g.
# `git archive HEAD | tar -x` of a clone). Nothing is downloaded: PS-lite is
# built with Debian's libzmq and protobuf, and its tests/test_kv_app_benchmark.cc
# is compiled unchanged against each runtime (against Libra through the
# PSLITE_BENCH_SOURCE option of bench/pslite/CMakeLists.txt). A second program,
# the same source with its push-pull repeated WARM times in one process
# (generated with sed into WORK), gives the warm figures.
#
# Every round runs each program once on each runtime, in a rotating order:
#   pslite         PS-lite, launched as its tests/local.sh does (1 server, 1 worker)
#   libra          libra launch -s 1 -w 1 --insecure  (like for like: PS-lite has no encryption)
#   libra-curve    libra launch -s 1 -w 1, ZeroMQ under CURVE (only where the launcher has --insecure)
#   libra-untuned  as libra, LIBRA_MALLOC_TUNING=0 (only with UNTUNED=1)
#   libra-thp      as libra, GLIBC_TUNABLES=glibc.malloc.hugetlb=1: glibc asks
#                  for transparent huge pages (only with THP=1)
# and prints the medians over the rounds of: the first push and pull of the
# unchanged program (cold) and, of the repeated one, the median of each run's
# pushes and pulls after its first (warm). Every sample goes to WORK/samples.tsv.
#
# Environment: LIBRA_BUILD (default build), WORK (default /tmp/libra-bench-pslite),
# ROUNDS (7), WARM (8), UNTUNED (0), THP (0), JOBS (2, builds run under nice).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

src=${1:-}
if [[ -z "$src" ]]; then
  echo "bench_pslite.sh: PS-lite's source is not given." >&2
  echo "usage: $0 PSLITE_SOURCE_DIR   (a PS-lite source tree; nothing is downloaded)" >&2
  exit 2
fi
src=$(cd "$src" 2>/dev/null && pwd) || {
  echo "bench_pslite.sh: $1 is not a directory" >&2
  exit 2
}
bench=$src/tests/test_kv_app_benchmark.cc
for f in "$bench" "$src/src/meta.proto" "$src/include/ps/ps.h" "$src/CMakeLists.txt"; do
  [[ -f "$f" ]] || {
    echo "bench_pslite.sh: $src is not a PS-lite source tree (no $f)" >&2
    exit 2
  }
done
for f in /usr/include/zmq.h /usr/include/google/protobuf/message.h /usr/bin/protoc; do
  [[ -e "$f" ]] || {
    echo "bench_pslite.sh: $f is missing: run scripts/install-deps.sh (libzmq3-dev," \
      "libprotobuf-dev, protobuf-compiler)" >&2
    exit 2
  }
done

build=$(cd "$repo" && realpath -m "${LIBRA_BUILD:-build}")
work=${WORK:-/tmp/libra-bench-pslite}
rounds=${ROUNDS:-7}
warm=${WARM:-8}
jobs=${JOBS:-2}
mkdir -p "$work/warm"

# The repeated program: the push and pull of the unchanged source in a loop.
warm_src=$work/warm/test_kv_app_benchmark_warm.cc
sed -e "s|^\( *\)int repeat = 1;|&\n\1for (int round = 0; round < $warm; ++round) {|" \
  -e '/Pull average time cost/a\  }' "$bench" >"$warm_src"
if [[ $(grep -c 'for (int round = 0' "$warm_src") != 1 || $(grep -c '^  }$' "$warm_src") -lt 1 ]]; then
  echo "bench_pslite.sh: $bench no longer has the shape this script edits" >&2
  exit 2
fi

# PS-lite, with the system's ZeroMQ and protobuf; FetchContent may not download.
cmake -S "$src" -B "$work/pslite-build" -G Ninja -DCMAKE_BUILD_TYPE=Release --no-warn-unused-cli \
  -DFETCHCONTENT_FULLY_DISCONNECTED=ON >"$work/pslite-configure.log"
grep -q '^ZMQ_LIBRARY:FILEPATH=/' "$work/pslite-build/CMakeCache.txt" || {
  echo "bench_pslite.sh: PS-lite's CMake did not find the system's ZeroMQ" >&2
  exit 2
}
nice -n 10 cmake --build "$work/pslite-build" -j"$jobs" --target pslite >/dev/null
# Its programs are compiled as Libra's CMake compiles them (-O2, C++11).
for prog in "$bench" "$warm_src"; do
  name=$(basename "$prog" .cc)
  nice -n 10 g++ -std=c++11 -O2 -DNDEBUG -I"$src/include" "$prog" -o "$work/pslite_$name" \
    "$work/pslite-build/libpslite.a" -lzmq -lprotobuf -pthread
done

# The same two sources against Libra.
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "-DPSLITE_BENCH_SOURCE=$bench;$warm_src" >/dev/null
nice -n 10 cmake --build "$build" -j"$jobs" --target libra pslite_test_kv_app_benchmark \
  pslite_test_kv_app_benchmark_warm >/dev/null
libra=$build/tools/libra/libra

modes=(pslite libra)
insecure=()
if "$libra" launch --help | grep -q -- '--insecure'; then
  insecure=(--insecure)
  modes+=(libra-curve)
fi
[[ "${UNTUNED:-0}" == 1 ]] && modes+=(libra-untuned)
[[ "${THP:-0}" == 1 ]] && modes+=(libra-thp)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# run MODE PROGRAM_NAME LOG: one job, the worker's output in LOG.
run() {
  local mode=$1 name=$2 log=$3
  case $mode in
    pslite)
      local prog=$work/pslite_$name port pids=()
      port=$(free_port)
      for role in scheduler server worker; do
        DMLC_NUM_SERVER=1 DMLC_NUM_WORKER=1 DMLC_PS_ROOT_URI=127.0.0.1 DMLC_PS_ROOT_PORT=$port \
          DMLC_ROLE=$role timeout 300 "$prog" >"$log.$role" 2>&1 &
        pids+=($!)
      done
      wait "${pids[@]}"
      cat "$log.scheduler" "$log.server" "$log.worker" >"$log"
      ;;
    libra) timeout 300 "$libra" launch -s 1 -w 1 "${insecure[@]}" -- "$build/bench/pslite/pslite_$name" >"$log" 2>&1 ;;
    libra-curve) timeout 300 "$libra" launch -s 1 -w 1 -- "$build/bench/pslite/pslite_$name" >"$log" 2>&1 ;;
    libra-untuned)
      LIBRA_MALLOC_TUNING=0 timeout 300 "$libra" launch -s 1 -w 1 "${insecure[@]}" -- \
        "$build/bench/pslite/pslite_$name" >"$log" 2>&1
      ;;
    libra-thp)
      GLIBC_TUNABLES=glibc.malloc.hugetlb=1 timeout 300 "$libra" launch -s 1 -w 1 "${insecure[@]}" -- \
        "$build/bench/pslite/pslite_$name" >"$log" 2>&1
      ;;
  esac
}

# times OP LOG: the worker's reported times of OP (Push or Pull), one a line.
times() { grep -o "$1 average time cost: [0-9.]*" "$2" | awk '{print $NF}'; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

samples=$work/samples.tsv
printf 'round\tmode\tprogram\top\tms\n' >"$samples"
for ((r = 1; r <= rounds; ++r)); do
  n=${#modes[@]}
  for ((i = 0; i < n; ++i)); do
    mode=${modes[$(((i + r - 1) % n))]}
    for name in test_kv_app_benchmark test_kv_app_benchmark_warm; do
      log=$work/log.$r.$mode.$name
      run "$mode" "$name" "$log" || {
        echo "bench_pslite.sh: round $r, $mode, $name failed (see $log)" >&2
        exit 1
      }
      for op in Push Pull; do
        if [[ $name == test_kv_app_benchmark ]]; then
          printf '%s\t%s\tcold\t%s\t%s\n' "$r" "$mode" "$op" "$(times $op "$log" | head -n1)"
        else
          printf '%s\t%s\twarm-first\t%s\t%s\n' "$r" "$mode" "$op" "$(times $op "$log" | head -n1)"
          printf '%s\t%s\twarm\t%s\t%s\n' "$r" "$mode" "$op" "$(times $op "$log" | tail -n +2 | median)"
        fi
      done >>"$samples"
    done
  done
  echo "round $r of $rounds done" >&2
done

echo "Medians over $rounds rounds, ms (1 server, 1 worker, TCP, 10M keys); samples: $samples"
printf '%-14s %10s %10s %12s %12s\n' mode cold-push cold-pull warm-push warm-pull
for mode in "${modes[@]}"; do
  m() { awk -F'\t' -v m="$mode" -v p="$1" -v o="$2" '$2 == m && $3 == p && $4 == o {print $5}' "$samples" | median; }
  printf '%-14s %10s %10s %12s %12s\n' "$mode" "$(m cold Push)" "$(m cold Pull)" "$(m warm Push)" "$(m warm Pull)"
done
