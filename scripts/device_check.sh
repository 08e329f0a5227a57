#!/usr/bin/env bash
# The GPU check for a machine that has the CUDA toolkit and nothing else: no
# CMake, no Qt, no Debian packages. It builds samplescope-cli with g++ and nvcc
# alone, from the sources and three header-only libraries brought along, and
# proves the CUDA backend against the reference in one run.
#
#   bash scripts/device_check.sh prepare   Here, where the Debian packages are:
#       copy CLI11, nlohmann/json and Eigen (header-only, about 11 MB) into
#       build-device/include, the one path to carry to the GPU machine.
#   bash scripts/device_check.sh build     Build build-device/samplescope-cli
#       from the sources and build-device/include only (the system's copies of
#       the three libraries are never read: the build fails if one is).
#   bash scripts/device_check.sh run       build, then on the GPU: exact mode
#       against the reference on 10,000 mixed rows and at V = 128,256, fast
#       mode's kept sets, two identical fast runs compared bit for bit, and the
#       time of fast mode at B = 256 beside the time to read the batch once.
#       Prints a table; logs go to $OUT when set, else build-device/logs.
#
# Exit status: 0 every check passed; 1 a check failed; 2 bad usage or a
# failed build; 3 no GPU answered (nothing was proven).
set -euo pipefail
cd "$(dirname "$0")/.."

dir=build-device
include=$dir/include
logs=${OUT:-$dir/logs}
jobs=$(nproc)

prepare() {
    mkdir -p "$include"
    for header in /usr/include/CLI /usr/include/nlohmann /usr/include/eigen3; do
        [ -d "$header" ] || { echo "device_check.sh: $header is missing (run scripts/dev.sh test first)" >&2; exit 2; }
    done
    rm -rf "$dir/obj"
    rm -rf "$include/CLI" "$include/nlohmann" "$include/Eigen" "$include/unsupported"
    cp -r /usr/include/CLI /usr/include/nlohmann "$include/"
    cp -r /usr/include/eigen3/Eigen /usr/include/eigen3/unsupported "$include/"
    echo "device_check.sh: carry $include ($(du -sh "$include" | cut -f1))"
}

build() {
    command -v nvcc >/dev/null || { echo "device_check.sh: nvcc is not on PATH" >&2; exit 2; }
    [ -d "$include/Eigen" ] || { echo "device_check.sh: $include is missing: run 'prepare' where the packages are" >&2; exit 2; }
    mkdir -p "$dir/obj" "$logs"
    local cuda_home arch
    cuda_home=$(dirname "$(dirname "$(command -v nvcc)")")
    # The GPU of this machine when one answers, else the H200's sm_90.
    arch=${SAMPLESCOPE_CUDA_ARCH:-native}
    if [ "$arch" = native ] && ! nvidia-smi >/dev/null 2>&1; then arch=sm_90; fi
    local flags=(-std=c++20 -O3 -DNDEBUG -ffp-contract=off -DSAMPLESCOPE_WITH_CUDA=1 -I. -isystem "$include" -isystem "$cuda_home/include"
                 -MMD)
    # Everything the CLI links: the engine, the batch engine and its tools, the options, the commands.
    local sources
    mapfile -t sources < <(find engine kernels app/cli -name '*.cpp' ! -name 'batch_no_cuda.cpp' | sort)
    sources+=(app/request_options.cpp)
    local objects=()
    for source in "${sources[@]}"; do objects+=("$dir/obj/${source//\//_}.o"); done
    echo "device_check.sh: compiling ${#sources[@]} files with $(g++ --version | head -1) and nvcc -arch=$arch"
    : >"$logs/build.log"
    # One compiler per core, as fuzz.sh runs its targets (no make on the machine is assumed).
    local running=0 i
    for i in "${!sources[@]}"; do
        g++ "${flags[@]}" -c "${sources[$i]}" -o "${objects[$i]}" >"${objects[$i]}.log" 2>&1 &
        running=$((running + 1))
        if [ "$running" -ge "$jobs" ]; then
            wait -n || true
            running=$((running - 1))
        fi
    done
    wait || true
    cat "$dir"/obj/*.log >>"$logs/build.log"
    nvcc -std=c++17 -O3 -arch="$arch" --expt-relaxed-constexpr -Xcompiler=-fPIC -I. -c kernels/batch_cuda.cu \
        -o "$dir/obj/batch_cuda.o" >>"$logs/build.log" 2>&1 || { tail -20 "$logs/build.log"; exit 2; }
    for object in "${objects[@]}"; do
        [ -s "$object" ] || { echo "device_check.sh: the build failed (see $logs/build.log)" >&2; tail -20 "$logs/build.log" >&2; exit 2; }
    done
    g++ -o "$dir/samplescope-cli" "${objects[@]}" "$dir/obj/batch_cuda.o" -L"$cuda_home/lib64" -lcudart -lpthread \
        >>"$logs/build.log" 2>&1 || { tail -20 "$logs/build.log" >&2; exit 2; }
    # Proof that only the carried headers were read.
    if grep -h -E '/usr/include/(eigen3|nlohmann|CLI)/' "$dir"/obj/*.d >/dev/null 2>&1; then
        echo "device_check.sh: a system copy of a carried library was read" >&2
        exit 2
    fi
    echo "device_check.sh: built $dir/samplescope-cli"
}

# "key": value of a flat JSON object printed by the CLI.
field() { sed -n "s/^  \"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$2" | head -1; }

run() {
    build
    local cli=$dir/samplescope-cli
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$logs/gpu.txt" 2>&1 || true
    if ! "$cli" batch --generate 1,16 --backend cuda >"$logs/probe.json" 2>"$logs/probe.err"; then
        echo "device_check.sh: no GPU answered: $(cat "$logs/probe.err")"
        exit 3
    fi
    echo "GPU: $(cat "$logs/gpu.txt")"
    local failed=0
    row() { printf '| %s | %s |\n' "$1" "$2"; }
    echo "| check | result |"
    echo "|---|---|"
    # Exact mode: the reference's token on every row but near-ties, and its kept sets.
    local name args
    for name in mixed-10000x40 every-stage-3x128256; do
        case $name in
            mixed-*) args=(--generate 10000,40 --workload mixed --generate-seed 1) ;;
            *) args=(--generate 3,128256 --workload every-stage --generate-seed 2) ;;
        esac
        for mode in exact fast; do
            local out=$logs/compare-$mode-$name.json
            if "$cli" compare "${args[@]}" --mode "$mode" --backend cuda >"$out" 2>"$out.err"; then
                local mismatch kept
                mismatch=$(field mismatch "$out")
                kept=$(field kept_mismatches "$out")
                if [ "$mismatch" = 0 ] && [ "$kept" = 0 ]; then
                    row "compare $mode $name" "pass: $(field equal "$out") equal, $(field near_tie "$out") near ties, worst logprob difference $(field worst_logprob_difference "$out")"
                else
                    row "compare $mode $name" "FAIL: $mismatch mismatches, $kept kept-set mismatches"
                    failed=1
                fi
            else
                row "compare $mode $name" "FAIL: $(head -1 "$out.err")"
                failed=1
            fi
        done
    done
    # Determinism: two identical fast runs give the same tokens, logprobs and kept counts.
    local a=$logs/fast-a.json b=$logs/fast-b.json
    for run_file in "$a" "$b"; do
        "$cli" batch --generate 256,128256 --workload top-p --mode fast --backend cuda >"$run_file" 2>&1 || true
    done
    if [ -s "$a" ] && cmp -s <(grep -v -E '"(seconds|kernel_seconds)"' "$a") <(grep -v -E '"(seconds|kernel_seconds)"' "$b"); then
        row "fast top-p B = 256 run twice" "pass: bitwise equal"
    else
        row "fast top-p B = 256 run twice" "FAIL: the runs differ (see $a, $b)"
        failed=1
    fi
    # Speed beside the floor: B x V x 4 bytes read once at the GPU's nominal bandwidth.
    local timing=$logs/fast-every-stage-256.json
    "$cli" batch --generate 256,128256 --workload every-stage --mode fast --backend cuda >"$timing" 2>&1 || true
    row "fast every-stage B = 256, V = 128,256" "$(field seconds "$timing") s end to end (transfers included); reading the batch once at the H200's 4.8 TB/s takes 27 us"
    exit "$failed"
}

case "${1:-}" in
    prepare) prepare ;;
    build) build ;;
    run) run ;;
    *) echo "usage: scripts/device_check.sh prepare|build|run" >&2; exit 2 ;;
esac
