#!/usr/bin/env bash
# The GPU check for a machine that has the CUDA toolkit and nothing else: no
# CMake, no Qt, no Debian packages. It builds samplescope-cli and the GPU
# self-test (kernels/check/) with g++ and nvcc alone, from the sources and
# three header-only libraries brought along, and proves the CUDA backend in
# one run.
#
#   bash scripts/device_check.sh prepare   Here, where the Debian packages are:
#       copy CLI11, nlohmann/json and the part of Eigen the sources read into
#       build-device/include (about 5 MB), the one path to carry to the GPU
#       machine.
#   bash scripts/device_check.sh build     Build build-device/samplescope-cli and
#       build-device/gpu_selftest from the sources and build-device/include
#       only (the system's copies of the three libraries are never read: the
#       build fails if one is).
#   bash scripts/device_check.sh run       build, then on the GPU: the self-test
#       (Philox in a kernel, exact and fast mode on the branch rows, the same
#       batch twice, refused logits in device memory, fast mode's speed beside
#       a measured device copy of the same bytes), the CLI's comparisons with
#       the reference, compute-sanitizer (racecheck, synccheck, memcheck) on
#       B = 2, V = 128,256 in both modes when the toolkit has it, and PyTorch
#       on the same bytes when python3 has torch with CUDA. Prints tables;
#       logs go to $OUT when set, else build-device/logs.
#
# Exit status: 0 every check passed; 1 a check failed (a sanitizer error, a
# sanitizer run that did not finish, a self-test check); 2 bad usage or a
# failed build; 3 no GPU answered (nothing was proven).
set -euo pipefail
cd "$(dirname "$0")/.."

dir=build-device
include=$dir/include
logs=${OUT:-$dir/logs}
jobs=$(nproc)
# Seconds each compute-sanitizer run may take before it counts as failed.
sanitizer_seconds=${SAMPLESCOPE_SANITIZER_SECONDS:-120}

# Every source file the two programs compile: the engine, the batch engine and
# its tools (the library), the CLI, the self-test, and every CUDA file.
list_sources() {
    library_sources=() cli_sources=() selftest_sources=() cuda_sources=()
    mapfile -t library_sources < <(find engine kernels -name '*.cpp' ! -name 'batch_no_cuda.cpp' ! -path 'kernels/check/*' | sort)
    mapfile -t cli_sources < <(find app/cli -name '*.cpp' | sort)
    cli_sources+=(app/request_options.cpp)
    mapfile -t selftest_sources < <(find kernels/check -name '*.cpp' | sort)
    mapfile -t cuda_sources < <(find kernels -name '*.cu' | sort)
}

prepare() {
    mkdir -p "$include"
    for header in /usr/include/CLI /usr/include/nlohmann /usr/include/eigen3; do
        [ -d "$header" ] || { echo "device_check.sh: $header is missing (run scripts/dev.sh test first)" >&2; exit 2; }
    done
    rm -rf "$dir/obj"
    rm -rf "$include/CLI" "$include/nlohmann" "$include/Eigen" "$include/unsupported"
    cp -r /usr/include/CLI /usr/include/nlohmann "$include/"
    # Eigen is read only for the incomplete gamma functions (the chi-square's
    # p-value, engine/stats/): unsupported/Eigen/SpecialFunctions and the core
    # it includes, about a third of the package. Carry the headers the sources
    # read here, found by the preprocessor, and with them the whole of the
    # core, its plugins and SpecialFunctions, so that another compiler or CPU
    # that picks other vector headers finds them too.
    list_sources
    local eigen=/usr/include/eigen3 wanted scan=(-std=c++20 -DSAMPLESCOPE_WITH_CUDA=1 -I. -isystem /usr/include/eigen3)
    if command -v nvcc >/dev/null; then scan+=(-isystem "$(cuda_home)/include"); fi
    wanted=$(printf '%s\n' "${library_sources[@]}" "${cli_sources[@]}" "${selftest_sources[@]}" |
        xargs -P "$jobs" -I{} g++ "${scan[@]}" -M {} |
        tr ' \\' '\n\n' | sed -n "s#^$eigen/##p" | sort -u)
    [ -n "$wanted" ] || { echo "device_check.sh: no source read an Eigen header (is the scan broken?)" >&2; exit 2; }
    (
        cd "$eigen"
        { echo "$wanted"; find Eigen/src/Core Eigen/src/plugins unsupported/Eigen/src/SpecialFunctions -type f; } |
            sort -u | xargs cp --parents -t "$OLDPWD/$include"
    )
    echo "device_check.sh: carry $include ($(du -sh "$include" | cut -f1): CLI11, nlohmann/json, $(find "$include/Eigen" "$include/unsupported" -type f | wc -l) of Eigen's headers)"
}

cuda_home() { dirname "$(dirname "$(command -v nvcc)")"; }

build() {
    command -v nvcc >/dev/null || { echo "device_check.sh: nvcc is not on PATH" >&2; exit 2; }
    [ -d "$include/Eigen" ] || { echo "device_check.sh: $include is missing: run 'prepare' where the packages are" >&2; exit 2; }
    mkdir -p "$dir/obj" "$logs"
    local home arch
    home=$(cuda_home)
    # The GPU of this machine when one answers, else the H200's sm_90.
    arch=${SAMPLESCOPE_CUDA_ARCH:-native}
    if [ "$arch" = native ] && ! nvidia-smi >/dev/null 2>&1; then arch=sm_90; fi
    # -Wno-psabi as in kernels/CMakeLists.txt: the host lanes pass vectors only inside always-inline helpers.
    local flags=(-std=c++20 -O3 -DNDEBUG -ffp-contract=off -DSAMPLESCOPE_WITH_CUDA=1 -I. -isystem "$include" -isystem "$home/include"
                 -Wno-psabi -MMD)
    list_sources
    # The CUDA files first: nvcc is the slowest compiler, so it starts while the cores are free.
    local sources=("${cuda_sources[@]}" "${library_sources[@]}" "${cli_sources[@]}" "${selftest_sources[@]}")
    object() { echo "$dir/obj/${1//\//_}.o"; }
    echo "device_check.sh: compiling ${#sources[@]} files with $(g++ --version | head -1) and nvcc -arch=$arch"
    : >"$logs/build.log"
    rm -f "$dir"/obj/*.o
    # One compiler per core, as fuzz.sh runs its targets (no make on the machine is assumed).
    local running=0 source out
    for source in "${sources[@]}"; do
        out=$(object "$source")
        case $source in
            *.cu) nvcc -std=c++17 -O3 -arch="$arch" --expt-relaxed-constexpr -Xcompiler=-fPIC -I. -c "$source" -o "$out" >"$out.log" 2>&1 & ;;
            *) g++ "${flags[@]}" -c "$source" -o "$out" >"$out.log" 2>&1 & ;;
        esac
        running=$((running + 1))
        if [ "$running" -ge "$jobs" ]; then
            wait -n || true
            running=$((running - 1))
        fi
    done
    wait || true
    cat "$dir"/obj/*.log >>"$logs/build.log"
    for source in "${sources[@]}"; do
        [ -s "$(object "$source")" ] || { echo "device_check.sh: $source did not compile (see $logs/build.log)" >&2; tail -20 "$logs/build.log" >&2; exit 2; }
    done
    # The CLI: the library, its own files and the backend's kernels; the
    # self-test: the library, its own files and every CUDA file.
    local cli_objects=() test_objects=()
    for source in "${library_sources[@]}" "${cli_sources[@]}"; do cli_objects+=("$(object "$source")"); done
    for source in "${cuda_sources[@]}"; do
        case $source in kernels/check/*) ;; *) cli_objects+=("$(object "$source")") ;; esac
    done
    for source in "${library_sources[@]}" "${selftest_sources[@]}" "${cuda_sources[@]}"; do test_objects+=("$(object "$source")"); done
    # The static runtime, as the CMake build links it: the programs start
    # without LD_LIBRARY_PATH pointing into the toolkit.
    local link=(-L"$home/lib64" -lcudart_static -ldl -lrt -lpthread)
    g++ -o "$dir/samplescope-cli" "${cli_objects[@]}" "${link[@]}" >>"$logs/build.log" 2>&1 ||
        { tail -20 "$logs/build.log" >&2; exit 2; }
    g++ -o "$dir/gpu_selftest" "${test_objects[@]}" "${link[@]}" >>"$logs/build.log" 2>&1 ||
        { tail -20 "$logs/build.log" >&2; exit 2; }
    # Proof that only the carried headers were read.
    if grep -h -E '/usr/include/(eigen3|nlohmann|CLI)/' "$dir"/obj/*.d >/dev/null 2>&1; then
        echo "device_check.sh: a system copy of a carried library was read" >&2
        exit 2
    fi
    echo "device_check.sh: built $dir/samplescope-cli and $dir/gpu_selftest"
}

# "key": value of a flat JSON object printed by the CLI.
field() { sed -n "s/^  \"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$2" | head -1; }

# compute-sanitizer on PATH, else beside nvcc (the toolkit's two layouts); empty when absent.
find_sanitizer() {
    local home candidate
    if command -v compute-sanitizer >/dev/null; then command -v compute-sanitizer; return; fi
    home=$(cuda_home)
    for candidate in "$home/bin/compute-sanitizer" "$home/compute-sanitizer/compute-sanitizer"; do
        if [ -x "$candidate" ]; then echo "$candidate"; return; fi
    done
}

run() {
    build
    local cli=$dir/samplescope-cli selftest=$dir/gpu_selftest logits=$dir/logits-every-stage-256.f32
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$logs/gpu.txt" 2>&1 || true
    # The self-test first: it says when no GPU answers (exit 3) before anything else runs.
    local status=0
    "$selftest" --write-logits "$logits" >"$logs/selftest.txt" 2>&1 || status=$?
    if [ "$status" -eq 3 ]; then
        echo "device_check.sh: $(head -1 "$logs/selftest.txt")"
        exit 3
    fi
    echo "GPU: $(cat "$logs/gpu.txt")"
    echo
    cat "$logs/selftest.txt"
    local failed=0
    if [ "$status" -ne 0 ]; then
        failed=1
        echo "device_check.sh: gpu_selftest exited with status $status"
    fi
    echo
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
    # End to end from host memory (the self-test's table has the kernels alone, from device memory).
    local timing=$logs/fast-every-stage-256.json
    "$cli" batch --generate 256,128256 --workload every-stage --mode fast --backend cuda >"$timing" 2>&1 || true
    row "fast every-stage B = 256, V = 128,256, from host memory" "$(field seconds "$timing") s end to end (transfers included)"

    # compute-sanitizer: any error it reports fails the check, and so does a run it could not finish.
    local sanitizer
    sanitizer=$(find_sanitizer)
    if [ -z "$sanitizer" ]; then
        row "compute-sanitizer" "not run: no compute-sanitizer on PATH or beside nvcc"
    else
        local tool mode log
        for tool in racecheck synccheck memcheck; do
            for mode in fast exact; do
                log=$logs/sanitizer-$tool-$mode.txt
                status=0
                timeout "$sanitizer_seconds" "$sanitizer" --tool "$tool" --error-exitcode 99 \
                    "$cli" batch --generate 2,128256 --workload every-stage --mode "$mode" --backend cuda >"$log" 2>&1 || status=$?
                if [ "$status" -eq 0 ]; then
                    row "compute-sanitizer $tool, $mode, B = 2, V = 128,256" "pass: $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | sed 's/^=* *//')"
                elif [ "$status" -eq 124 ]; then
                    row "compute-sanitizer $tool, $mode, B = 2, V = 128,256" "FAIL: not finished in $sanitizer_seconds s"
                    failed=1
                else
                    row "compute-sanitizer $tool, $mode, B = 2, V = 128,256" "FAIL (status $status): $(grep -m1 -E '^=+ +(Error|ERROR|Invalid|Race|Barrier)' "$log" | sed 's/^=* *//')"
                    failed=1
                fi
            done
        done
    fi

    # PyTorch's own kernels on the same bytes, where python3 has torch with CUDA.
    local python
    python=$(command -v python3 || true)
    if [ -n "$python" ] && "$python" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
        local torch_log=$logs/torch.txt ours theirs
        if "$python" bench/torch_sampling_baseline.py --logits "$logits" --rows 256 --vocab 128256 >"$torch_log" 2>&1; then
            ours=$(sed -n 's/^kernel_us_every_stage_256 //p' "$logs/selftest.txt")
            theirs=$(sed -n 's/^torch_us //p' "$torch_log")
            row "PyTorch softmax + top-k + top-p + multinomial, B = 256, same bytes" \
                "$theirs us ($(head -1 "$torch_log")); fast mode every stage $ours us; PyTorch / fast mode: $(awk -v a="$theirs" -v b="$ours" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "no time" }') (target: above 1)"
        else
            row "PyTorch on the same bytes" "did not run: $(tail -1 "$torch_log")"
        fi
    else
        row "PyTorch on the same bytes" "skipped: no python3 with torch and CUDA on this machine"
    fi
    rm -f "$logits"
    exit "$failed"
}

case "${1:-}" in
    prepare) prepare ;;
    build) build ;;
    run) run ;;
    *) echo "usage: scripts/device_check.sh prepare|build|run" >&2; exit 2 ;;
esac
