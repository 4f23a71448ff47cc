#!/usr/bin/env bash
# Installs every Debian package Libra needs to build, test and benchmark.
# Idempotent: when everything is present it only checks, with no apt-get call.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libzmq3-dev cppzmq-dev            # transport (ZeroMQ + C++ bindings)
  libsodium-dev                     # the MAC of UPDATE/REPLICA (keyed BLAKE2b)
  libcli11-dev nlohmann-json3-dev   # command line, JSON reports
  libgtest-dev libgmock-dev libbenchmark-dev
  libeigen3-dev                     # small dense MLP of DeepFM
  clang clang-format libclang-rt-14-dev   # libFuzzer targets, style
  python3 python3-matplotlib        # figures
  pybind11-dev python3-pybind11 python3-dev   # the Python module (python/, for /usr/bin/python3)
  python3-numpy python3-pytest python3-torch  # its tests; torch for tensors and the example
  python3-venv python3-setuptools python3-wheel  # `pip install ./python` into a venv, offline
  libbpf-dev bpftool libelf-dev zlib1g-dev linux-libc-dev   # the XDP switch (src/xdp)
  iproute2 nftables                 # network namespaces, shaped links, injected loss
  ethtool                           # veth XDP counters (ethtool -S) named in docs/switch.md
  liblinear-tools                   # reference solver for the LR quality check
  libprotobuf-dev protobuf-compiler   # PS-lite itself, for scripts/bench_pslite.sh
  procps psmisc
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
