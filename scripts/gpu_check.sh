#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU (sized for an H200, under 5
# minutes): configure for sm_90, build the CUDA tests and the benchmark, run the
# CUDA tests, time fast mode at B = 256 with every stage active against the time
# to read the logits once at the copy bandwidth measured in the same run, and
# print a short table. Logs go to $OUT when it is set, else build-gpu/logs.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${SAMPLESCOPE_GPU_BUILD_DIR:-build-gpu}
logs=${OUT:-$build_dir/logs}
mkdir -p "$logs"

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$logs/gpu.txt" 2>&1 || true
echo "GPU: $(cat "$logs/gpu.txt")"

cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DSAMPLESCOPE_CUDA_ARCHITECTURES=90 \
      -DSAMPLESCOPE_GUI=OFF -DSAMPLESCOPE_BENCHMARKS=ON >"$logs/configure.log" 2>&1
cmake --build "$build_dir" -j"$(nproc)" --target test_batch_cuda test_batch_branches_cuda test_kernel_math bench_batch >"$logs/build.log" 2>&1

set +e
"$build_dir/tests/test_batch_cuda" >"$logs/test_batch_cuda.log" 2>&1
tests_status=$?
"$build_dir/tests/test_batch_branches_cuda" >"$logs/test_batch_branches_cuda.log" 2>&1
branches_status=$?
"$build_dir/tests/test_kernel_math" >"$logs/test_kernel_math.log" 2>&1
math_status=$?
timeout 240 "$build_dir/bench/bench_batch" \
    --benchmark_filter='^cuda/fast/(every-stage|top-p|greedy)/(64|256)$|^cuda/exact/every-stage/1$' \
    --benchmark_min_time=0.2 >"$logs/bench_batch.log" 2>&1
bench_status=$?
set -e

floor_us=$(sed -n 's/.*reading B = 256 logits once takes \([0-9.]*\) us.*/\1/p' "$logs/bench_batch.log")
echo
python3 - "$floor_us" "$logs" "$tests_status" "$math_status" "$bench_status" "$branches_status" <<'PY'
import re, sys
floor, logs, tests, math, bench, branches = sys.argv[1:7]
SCALE = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9}
def number(value, suffix):
    return float(value) * SCALE[suffix]
tail = lambda name: open(f"{logs}/{name}").read().strip().splitlines()[-2:]
print("| check | result |")
print("|---|---|")
print(f"| test_batch_cuda | {'pass' if tests == '0' else 'FAIL'} ({' '.join(tail('test_batch_cuda.log'))[:120]}) |")
print(f"| test_batch_branches_cuda | {'pass' if branches == '0' else 'FAIL'} ({' '.join(tail('test_batch_branches_cuda.log'))[:120]}) |")
print(f"| test_kernel_math | {'pass' if math == '0' else 'FAIL'} |")
log = open(f"{logs}/bench_batch.log").read()
every = None
for line in log.splitlines():
    m = re.match(r"^(cuda/\S+)\s.*rows_per_s=([0-9.]+)([kMG]?)\S*.*us_per_batch=([0-9.]+)([kMG]?)", line)
    if m:
        rows = number(m.group(2), m.group(3))
        t = number(m.group(4), m.group(5))
        if m.group(1) == "cuda/fast/every-stage/256":
            every = t
        print(f"| {m.group(1)} | {t:.1f} us per batch, {rows:,.0f} rows/s |")
if floor:
    print(f"| read B = 256 logits once at the measured copy bandwidth | {float(floor):.1f} us |")
    if every:
        print(f"| fast every-stage B = 256 / read-once floor | {every / float(floor):.2f}x (target <= 2x) |")
for line in log.splitlines():
    if "PyTorch" in line or "ratio" in line:
        print(f"| baseline | {line.strip()} |")
print(f"| benchmark exit status | {bench} |")
PY
