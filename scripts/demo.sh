#!/usr/bin/env bash
# Installs what is missing, builds (release), and runs the main job: `libra demo`.
# Extra arguments are passed to `libra demo` (see `build/tools/libra/libra demo --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target libra
exec build/tools/libra/libra demo "$@"
