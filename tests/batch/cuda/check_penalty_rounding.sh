#!/usr/bin/env bash
# test_penalty_rounding: NVCC SOURCE_DIR. Compiles penalty_rounding.cu to PTX
# and fails if an f64 multiply, add or subtract in it has no rounding mode.
set -euo pipefail
nvcc=$1
root=$2
ptx=$(mktemp --suffix=.ptx)
trap 'rm -f "$ptx"' EXIT
"$nvcc" -std=c++17 -arch=sm_90 -I"$root" -ptx "$root/tests/batch/cuda/penalty_rounding.cu" -o "$ptx"
ops=$(grep -E '^\s*(mul|add|sub)(\.[a-z]+)*\.f64' "$ptx" || true)
echo "$ops"
[ -n "$ops" ] || { echo "no f64 arithmetic in the PTX: the test kernel did not compile as expected"; exit 1; }
if echo "$ops" | grep -Ev '\.(rn|rz|rm|rp)\.f64' >/dev/null; then
    echo "an f64 operation without a rounding mode: ptxas may fuse it into a multiply-add"
    exit 1
fi
echo "every f64 multiply and subtract rounds on its own"
