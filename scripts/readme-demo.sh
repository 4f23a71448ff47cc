#!/usr/bin/env bash
# Runs the default demo (as scripts/demo.sh does) and puts its table, sweep,
# summary line and loss-over-time figure into README.md's first section.
# Extra arguments are passed to `libra demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
out=libra-demo
mkdir -p "$out"
scripts/demo.sh --out "$out" "$@" | tee "$out/terminal.txt"
/usr/bin/python3 scripts/readme_demo.py "$out/terminal.txt" "$out" README.md
