#!/usr/bin/env bash
# Runs bench/bench_gui_input (real key events under its own Xvfb) a few times
# and notes the machine and its load around each run, for docs/gui.md "Speed".
# usage: scripts/bench_gui_input.sh [runs (3)] [keys per slider and direction (15)] [generate]
# (`generate`: the same keys on the Generate tab, Debian's n-gram model at V = 72,547)
# SAMPLESCOPE_BUILD_DIR picks the build folder (default: build).
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${SAMPLESCOPE_BUILD_DIR:-build}
runs=${1:-3}
keys=${2:-15}
mode=${3:-}
bench="$build_dir/bench/bench_gui_input"
if [ ! -x "$bench" ]; then
    echo "$bench is not built: cmake --build $build_dir --target bench_gui_input (needs libx11-dev, libxtst-dev)" >&2
    exit 2
fi
lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core)' || true
for ((run = 1; run <= runs; ++run)); do
    echo "== run $run of $runs; before: $(uptime)"
    # A DISPLAY from the caller is used as it is; without one the bench starts its own Xvfb.
    "$bench" "$keys" ${mode:+"$mode"}
    echo "== after: $(uptime)"
done
