// How fast the loaders turn a file into doubles, next to two yardsticks on the
// same files in the same run: numpy's np.load(path).astype(np.float64) (the
// target: within 1.5x of it) and `cat FILE > /dev/null` (both from the page
// cache after the first run). Figures go to docs/loaders.md; nothing here
// fails on timing.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "bench/python_baseline.h"
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
    std::string safetensors_f32;
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
        safetensors_f32 = (dir / "batch_f32.safetensors").string();
        samplescope::write_file_bytes(safetensors_f32, samplescope::encode_safetensors(
                                                           {{"logits", {kBatch, kVocab}, values, FloatType::F32, {}}}));
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
void BM_LoadSafetensorsF32_64x128256(benchmark::State& state) { load(state, files().safetensors_f32); }
void BM_CatSafetensorsF32_64x128256(benchmark::State& state) { cat(state, files().safetensors_f32); }
void BM_LoadSafetensorsBf16_128256(benchmark::State& state) { load(state, files().safetensors_bf16); }
void BM_CatSafetensorsBf16_128256(benchmark::State& state) { cat(state, files().safetensors_bf16); }

// Three repetitions each: the ratios take the best, as numpy's figure is a best too.
BENCHMARK(BM_AllocateResult_64x128256)->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(3);
BENCHMARK(BM_LoadNpyF32_64x128256)->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(3);
BENCHMARK(BM_CatNpyF32_64x128256)->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(3);
BENCHMARK(BM_LoadSafetensorsF32_64x128256)->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(3);
BENCHMARK(BM_CatSafetensorsF32_64x128256)->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(3);
BENCHMARK(BM_LoadSafetensorsBf16_128256)->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(3);
BENCHMARK(BM_CatSafetensorsBf16_128256)->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(3);

// Keeps the best wall time per iteration of each benchmark over its repetitions.
class BestReporter : public benchmark::ConsoleReporter {
public:
    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const auto& run : runs) {
            if (run.run_type != Run::RT_Iteration || run.iterations == 0 || run.error_occurred) continue;
            const double ms = run.GetAdjustedRealTime();  // in the benchmark's unit, milliseconds
            auto [it, fresh] = best_ms.emplace(run.run_name.function_name, ms);
            if (!fresh) it->second = std::min(it->second, ms);
        }
    }
    std::map<std::string, double> best_ms;
};

// numpy's best time for each file (bench/numpy_load.py), keyed by path; empty
// when no python3 with numpy is found.
std::map<std::string, double> numpy_best_ms(const std::vector<std::string>& paths) {
    std::map<std::string, double> times;
    const std::string python = samplescope::bench::python_with("numpy");
    if (python.empty()) {
        std::cout << "\nnumpy yardstick: no python3 with numpy here; no ratios.\n";
        return times;
    }
    std::string command = python + " " + SAMPLESCOPE_BENCH_DIR + "/numpy_load.py";
    for (const auto& path : paths) command += " '" + path + "'";
    std::cout << "\n== numpy yardstick: " << command << "\n";
    if (FILE* pipe = popen((command + " 2>&1").c_str(), "r")) {
        char line[4096];
        while (fgets(line, sizeof line, pipe)) {
            std::cout << line;
            std::istringstream fields(line);
            std::string path;
            double ms = 0.0;
            if (fields >> path >> ms && ms > 0.0) times[path] = ms;
        }
        pclose(pipe);
    }
    return times;
}

void print_ratios(const BestReporter& reporter) {
    const auto& f = files();
    const std::map<std::string, double> numpy = numpy_best_ms({f.npy_f32, f.safetensors_f32, f.safetensors_bf16});
    if (numpy.empty()) return;
    const std::pair<const char*, const std::string*> cases[] = {
        {"BM_LoadNpyF32_64x128256", &f.npy_f32},
        {"BM_LoadSafetensorsF32_64x128256", &f.safetensors_f32},
        {"BM_LoadSafetensorsBf16_128256", &f.safetensors_bf16},
    };
    std::cout << "\n== best load time against numpy's best on the same file (same run; target <= 1.5x)\n";
    for (const auto& [name, path] : cases) {
        const auto ours = reporter.best_ms.find(name);
        const auto theirs = numpy.find(*path);
        if (ours == reporter.best_ms.end() || theirs == numpy.end()) continue;
        std::printf("%-34s %8.3f ms  numpy %8.3f ms  %5.2fx\n", name, ours->second, theirs->second,
                    ours->second / theirs->second);
    }
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    files();  // written before any timing
    BestReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    print_ratios(reporter);
    return 0;
}
