#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang, ASan and UBSan in their
# own build folder, then runs each from its seed corpus for a fixed budget.
# SAMPLESCOPE_FUZZ_SECONDS sets the budget per target (default 10: thirteen
# targets, run one per core at a time, about a minute on two cores). New
# inputs go to a scratch folder, so the committed corpus stays as it is; a
# crash leaves its input in fuzz-work/<target>/findings and fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."

root=$PWD
build_dir=${SAMPLESCOPE_FUZZ_BUILD_DIR:-build-fuzz}
seconds=${SAMPLESCOPE_FUZZ_SECONDS:-10}
targets=(npy safetensors json_logits text_logits tokenizer_json vocab_txt gguf_vocab token_display params_json number_text
         label_json ngram_trie responses)

# libFuzzer ships with clang's runtime; install both when missing (Debian 12).
if ! command -v clang++ >/dev/null || ! dpkg-query -W -f='${Status}' libclang-rt-dev 2>/dev/null | grep -q "install ok installed"; then
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends clang libclang-rt-dev
fi
# -O1 with line tables only: a crash still names file and line, and the build
# takes a fraction of RelWithDebInfo's time.
generator=()
# Ninja for a new build folder where it is installed (scripts/dev.sh installs it).
if [ ! -f "$build_dir/CMakeCache.txt" ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" \
      -DSAMPLESCOPE_FUZZ=ON -DSAMPLESCOPE_SANITIZE=address,undefined -DSAMPLESCOPE_GUI=OFF \
      -DSAMPLESCOPE_CUDA=OFF -DSAMPLESCOPE_BENCHMARKS=OFF -DSAMPLESCOPE_WERROR=ON >/dev/null
cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]/#/fuzz_}"

# One target per core at a time, each logging to its own file (printed in
# order once it ends) and leaving any failing input in its own folder.
run_target() {
    local target=$1
    local scratch="$build_dir/fuzz-work/$target"
    mkdir -p "$scratch/corpus" "$scratch/findings"
    # -rss_limit_mb bounds memory; -max_len lets a seed-sized file grow.
    (cd "$build_dir" && "./tests/fuzz/fuzz_$target" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 \
        -timeout=10 -print_final_stats=1 -artifact_prefix="fuzz-work/$target/findings/" \
        "fuzz-work/$target/corpus" "$root/tests/fuzz/corpus/$target") >"$scratch/log" 2>&1 || true
}
rm -rf "$build_dir/fuzz-work"
jobs_at_once=$(nproc)
running=0
for target in "${targets[@]}"; do
    run_target "$target" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs_at_once" ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait
failed=0
for target in "${targets[@]}"; do
    echo "== fuzz_$target: ${seconds}s =="
    grep -E "^(#[0-9]+.*DONE|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY|Test unit written)" \
        "$build_dir/fuzz-work/$target/log" || true
    if [ -n "$(find "$build_dir/fuzz-work/$target/findings" -type f)" ]; then
        echo "fuzz.sh: fuzz_$target found a failing input (see $build_dir/fuzz-work/$target/findings)" >&2
        failed=1
    fi
done
[ "$failed" -eq 0 ] || exit 1
echo "fuzz.sh: every target ran ${seconds}s with no finding"
