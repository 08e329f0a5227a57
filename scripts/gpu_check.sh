#!/usr/bin/env bash
# The fuller GPU check, for a machine with an NVIDIA GPU and the project's own
# dependencies (CMake, Qt 6 Core and Test, nlohmann/json, CLI11, Eigen, Google
# Benchmark). A machine with the CUDA toolkit alone runs scripts/device_check.sh.
#
# Configures build-gpu for sm_90, builds the CUDA tests, the GPU self-test and
# the benchmark, then runs: the Qt CUDA tests (a test that skips fails here:
# a skip there means no GPU answered), kernels/check/gpu_selftest with its
# benchmark (its own table: ratios to a device copy measured in the same run),
# and bench_batch's CUDA cases. Prints one table, no python needed. Logs go to
# $OUT when it is set, else build-gpu/logs.
#
# Exit status: 0 every check passed; 1 a check failed; 2 the build failed;
# 3 no GPU answered.
set -uo pipefail
cd "$(dirname "$0")/.."

build_dir=${SAMPLESCOPE_GPU_BUILD_DIR:-build-gpu}
logs=${OUT:-$build_dir/logs}
mkdir -p "$logs"

if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$logs/gpu.txt" 2>&1
else
    echo "no nvidia-smi on PATH" >"$logs/gpu.txt"
fi
echo "GPU: $(head -1 "$logs/gpu.txt")"

if ! cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DSAMPLESCOPE_CUDA_ARCHITECTURES=90 \
        -DSAMPLESCOPE_GUI=OFF -DSAMPLESCOPE_BENCHMARKS=ON >"$logs/configure.log" 2>&1 ||
   ! cmake --build "$build_dir" -j"$(nproc)" --target test_batch_cuda test_batch_branches_cuda test_kernel_math \
        gpu_selftest bench_batch >"$logs/build.log" 2>&1; then
    echo "gpu_check.sh: the build failed (see $logs/configure.log and $logs/build.log)" >&2
    tail -20 "$logs/build.log" >&2
    exit 2
fi

failed=0
rows=()
# A Qt test passes here only when it passed and skipped nothing.
qt_test() {
    local name=$1
    "$build_dir/tests/batch/$name" >"$logs/$name.log" 2>&1
    local status=$?
    local totals
    totals=$(grep -m1 '^Totals:' "$logs/$name.log" || echo "no totals")
    if [ "$status" -ne 0 ] || grep -q '^SKIP ' "$logs/$name.log"; then
        failed=1
        rows+=("| $name | FAIL: $totals |")
    else
        rows+=("| $name | pass: $totals |")
    fi
}
qt_test test_batch_cuda
qt_test test_batch_branches_cuda
qt_test test_kernel_math

"$build_dir/kernels/check/gpu_selftest" >"$logs/gpu_selftest.log" 2>&1
selftest=$?
case $selftest in
    0) rows+=("| gpu_selftest | pass (its table below) |") ;;
    3) rows+=("| gpu_selftest | no GPU answered |") ;;
    *) failed=1; rows+=("| gpu_selftest | FAIL, exit $selftest (its table below) |") ;;
esac

# Google Benchmark names CUDA cases .../manual_time: the filter leaves the end open.
timeout 240 "$build_dir/bench/bench_batch" \
    --benchmark_filter='^cuda/(fast/(every-stage|top-p|greedy)/(64|256)|exact/every-stage/1)/' \
    --benchmark_min_time=0.2 >"$logs/bench_batch.log" 2>&1
bench=$?
cases=$(grep -c '^cuda/' "$logs/bench_batch.log")
if [ "$bench" -ne 0 ] || [ "$cases" -eq 0 ]; then
    failed=1
    rows+=("| bench_batch (CUDA cases) | FAIL: exit $bench, $cases cases ran |")
else
    rows+=("| bench_batch (CUDA cases) | $cases cases ran (the lines below) |")
fi

echo
echo "| check | result |"
echo "|---|---|"
printf '%s\n' "${rows[@]}"
echo
cat "$logs/gpu_selftest.log"
echo
grep -E '^(cuda/|copy_bandwidth|.*reading B = )' "$logs/bench_batch.log"

if [ "$selftest" -eq 3 ]; then exit 3; fi
exit "$failed"
