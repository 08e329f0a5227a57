// The reference engine at full vocabulary size (V = 128,256): a full trace and
// the lean path with every stage active, then the same pipeline in vectorised
// numpy (bench/numpy_pipeline.py) on the same row for the ratio.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "bench/python_baseline.h"
#include "engine/pipelines/sampler.h"
#include "engine/core/synthetic_logits.h"

using namespace samplescope;

namespace {

SamplingParams every_stage() {
    SamplingParams p;
    p.temperature = 0.7;
    p.top_k = 50;
    p.top_p = 0.9;
    p.min_p = 0.05;
    p.repetition_penalty = 1.1;
    p.presence_penalty = 0.2;
    p.frequency_penalty = 0.1;
    p.seed = 1;
    return p;
}

std::vector<std::int64_t> history(std::size_t n) {
    std::vector<std::int64_t> ids;
    for (std::size_t i = 0; i < n; ++i) ids.push_back(static_cast<std::int64_t>((i * 7919) % kLlama3VocabSize));
    return ids;
}

struct Workload {
    std::vector<double> logits = realistic_logits(kLlama3VocabSize);
    std::vector<std::int64_t> prompt = history(500);
    std::vector<std::int64_t> output = history(500);
};

const Workload& workload() {
    static const Workload w;
    return w;
}

void run(benchmark::State& state, const SamplingParams& params, bool traced) {
    const auto& w = workload();
    const HistoryCounts counts = count_history(w.prompt, w.output, w.logits.size());
    for (auto _ : state) {
        Pcg32 rng = stream(*params.seed, kSampleLabel);
        if (traced) {
            auto trace = trace_step(StepInput{w.logits, params, counts}, rng, *params.seed, 0);
            benchmark::DoNotOptimize(trace.token);
        } else {
            auto result = sample_step(StepInput{w.logits, params, counts}, rng);
            benchmark::DoNotOptimize(result.token);
        }
    }
    state.counters["rows/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_FullTrace_EveryStage(benchmark::State& state) { run(state, every_stage(), true); }
void BM_Lean_EveryStage(benchmark::State& state) { run(state, every_stage(), false); }
void BM_FullTrace_TopPOnly(benchmark::State& state) {
    SamplingParams p;
    p.top_p = 0.9;
    p.seed = 1;
    run(state, p, true);
}
void BM_FullTrace_Greedy(benchmark::State& state) {
    SamplingParams p;
    p.temperature = 0.0;
    p.seed = 1;
    run(state, p, true);
}

BENCHMARK(BM_FullTrace_EveryStage)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Lean_EveryStage)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FullTrace_TopPOnly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FullTrace_Greedy)->Unit(benchmark::kMillisecond);

// Runs the numpy version of the same pipeline on the same row (written to a
// temporary .npy) and prints its time per row, when python3 with numpy exists.
void compare_with_numpy() {
    const auto& w = workload();
    const std::string path = "bench_trace_row.f64";
    {
        std::ofstream out(path, std::ios::binary);
        out.write(reinterpret_cast<const char*>(w.logits.data()), static_cast<std::streamsize>(w.logits.size() * sizeof(double)));
    }
    const std::string python = bench::python_with("numpy");
    if (python.empty()) {
        std::cout << "\nnumpy baseline: no python3 with numpy here; no ratio.\n";
        std::remove(path.c_str());
        return;
    }
    const std::string command = python + " " + SAMPLESCOPE_BENCH_DIR + "/numpy_pipeline.py " + path + " 2>&1";
    std::cout << "\n== numpy baseline: " << command << "\n";
    if (FILE* pipe = popen(command.c_str(), "r")) {
        char line[512];
        while (fgets(line, sizeof line, pipe)) std::cout << line;
        pclose(pipe);
    }
    std::remove(path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    compare_with_numpy();
    return 0;
}
