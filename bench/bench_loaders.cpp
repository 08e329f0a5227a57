// How fast the loaders turn a file into doubles, next to `cat FILE > /dev/null`
// reading the same bytes (both from the page cache after the first run).
// Figures go to docs/loaders.md; nothing here fails on timing.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "engine/io/logits_loader.h"
#include "engine/io/npy_writer.h"
#include "engine/io/safetensors_writer.h"

namespace {

using samplescope::FloatType;

constexpr std::uint64_t kBatch = 64;
constexpr std::uint64_t kVocab = 128256;  // Llama 3's vocabulary

struct BenchFiles {
    std::filesystem::path dir;
    std::string npy_f32;
    std::string safetensors_bf16;

    BenchFiles() {
        dir = std::filesystem::temp_directory_path() / ("samplescope-bench-" + std::to_string(std::random_device{}()));
        std::filesystem::create_directories(dir);
        std::mt19937_64 rng(1);
        std::normal_distribution<double> normal(0.0, 4.0);
        std::vector<double> values(kBatch * kVocab);
        for (auto& v : values) v = normal(rng);
        npy_f32 = (dir / "batch_f32.npy").string();
        samplescope::write_file_bytes(npy_f32, samplescope::encode_npy({kBatch, kVocab}, values, {{FloatType::F32, false}}));
        values.resize(kVocab);
        safetensors_bf16 = (dir / "row_bf16.safetensors").string();
        samplescope::write_file_bytes(safetensors_bf16,
                                      samplescope::encode_safetensors({{"logits", {kVocab}, values, FloatType::BF16, {}}}));
    }
    ~BenchFiles() {
        std::error_code ignored;
        std::filesystem::remove_all(dir, ignored);
    }
};

const BenchFiles& files() {
    static const BenchFiles instance;
    return instance;
}

void load(benchmark::State& state, const std::string& path) {
    for (auto _ : state) {
        auto matrix = samplescope::load_logits_file(path);
        benchmark::DoNotOptimize(matrix.values.data());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * std::filesystem::file_size(path)));
}

void cat(benchmark::State& state, const std::string& path) {
    const std::string command = "cat '" + path + "' > /dev/null";
    for (auto _ : state) {
        if (std::system(command.c_str()) != 0) state.SkipWithError("cat failed");
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * std::filesystem::file_size(path)));
}

// The floor under any loader that returns fresh doubles: getting (and zeroing)
// the result's pages from the OS.
void BM_AllocateResult_64x128256(benchmark::State& state) {
    for (auto _ : state) {
        std::vector<double> values(kBatch * kVocab);
        benchmark::DoNotOptimize(values.data());
    }
}
void BM_LoadNpyF32_64x128256(benchmark::State& state) { load(state, files().npy_f32); }
void BM_CatNpyF32_64x128256(benchmark::State& state) { cat(state, files().npy_f32); }
void BM_LoadSafetensorsBf16_128256(benchmark::State& state) { load(state, files().safetensors_bf16); }
void BM_CatSafetensorsBf16_128256(benchmark::State& state) { cat(state, files().safetensors_bf16); }

BENCHMARK(BM_AllocateResult_64x128256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoadNpyF32_64x128256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CatNpyF32_64x128256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoadSafetensorsBf16_128256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CatSafetensorsBf16_128256)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
