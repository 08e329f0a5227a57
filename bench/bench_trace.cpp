// The reference engine at full vocabulary size (V = 128,256): a full trace and
// the lean path with every stage active, a broad row, V = 10^6 and the presets,
// each printed at the end as a ratio to the yardstick measured in the same
// run (one f64 exp pass over the row, the floor of any exact sampler: the
// logprob needs sum exp(l - M) over every id); then the same pipeline in
// vectorised numpy (bench/numpy_pipeline.py) on the same row.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <string>

#include "bench/python_baseline.h"
#include "bench/workloads.h"
#include "bench/yardstick.h"
#include "engine/core/synthetic_logits.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/pipeline_runner.h"
#include "engine/pipelines/sampler.h"

using namespace samplescope;
using namespace samplescope::bench;

namespace {

std::vector<std::int64_t> history(std::size_t n) {
    std::vector<std::int64_t> ids;
    for (std::size_t i = 0; i < n; ++i) ids.push_back(static_cast<std::int64_t>((i * 7919) % kLlama3VocabSize));
    return ids;
}

// A broad row: logits N(0, 0.5), so top-p keeps tens of thousands of ids.
std::vector<double> broad_logits(std::size_t vocab) {
    std::mt19937_64 gen(11);
    std::normal_distribution<double> normal(0.0, 0.5);
    std::vector<double> logits(vocab);
    for (auto& l : logits) l = normal(gen);
    return logits;
}

struct Workload {
    std::vector<double> logits;
    std::vector<std::int64_t> prompt = history(500);
    std::vector<std::int64_t> output = history(500);
};

enum class Row { Realistic, Broad, Million };

const Workload& workload(Row row = Row::Realistic) {
    static const std::map<Row, Workload> rows = [] {
        std::map<Row, Workload> w;
        w[Row::Realistic].logits = realistic_logits(kLlama3VocabSize);
        w[Row::Broad].logits = broad_logits(kLlama3VocabSize);
        w[Row::Million].logits = realistic_logits(1'000'000);
        return w;
    }();
    return rows.at(row);
}

void exp_pass(benchmark::State& state, Row row) {
    const auto& logits = workload(row).logits;
    for (auto _ : state) benchmark::DoNotOptimize(exp_pass_once(logits));
}

void run(benchmark::State& state, const SamplingParams& params, bool traced, Row row = Row::Realistic) {
    const auto& w = workload(row);
    const HistoryCounts counts = count_history(w.prompt, w.output, w.logits.size());
    with_yardstick(state, w.logits, [&] {
        Pcg32 rng = stream(*params.seed, kSampleLabel);
        if (traced) {
            auto trace = trace_step(StepInput{w.logits, params, counts}, rng, *params.seed, 0);
            benchmark::DoNotOptimize(trace.token);
        } else {
            auto result = sample_step(StepInput{w.logits, params, counts}, rng);
            benchmark::DoNotOptimize(result.token);
        }
    });
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

void BM_ExpPass(benchmark::State& state) { exp_pass(state, Row::Realistic); }
void BM_ExpPass_1M(benchmark::State& state) { exp_pass(state, Row::Million); }
void BM_FullTrace_BroadTopP(benchmark::State& state) {
    SamplingParams p;
    p.top_p = 0.9;
    p.seed = 1;
    run(state, p, true, Row::Broad);
}
// The same row at p 0.6, which keeps 51,618 ids (p 0.9 keeps 100,336 of them).
void BM_FullTrace_BroadTopP_50k(benchmark::State& state) {
    SamplingParams p;
    p.top_p = 0.6;
    p.seed = 1;
    run(state, p, true, Row::Broad);
}
void BM_FullTrace_EveryStage_1M(benchmark::State& state) { run(state, every_stage(), true, Row::Million); }

// A preset's trace: the f64 model plus its float32 run (PipelineTrace::engine_f32).
void preset(benchmark::State& state, const char* name) {
    const auto& w = workload();
    const Pipeline pipeline = preset_pipeline(name);
    const SamplingParams params = every_stage();
    const HistoryCounts counts = count_history(w.prompt, w.output, w.logits.size());
    with_yardstick(state, w.logits, [&] {
        Pcg32 rng = stream(*params.seed, kSampleLabel);
        const PipelineTrace trace =
            run_pipeline(pipeline, PipelineInput{w.logits, params, w.prompt, w.output}, rng, *params.seed, 0, &counts);
        benchmark::DoNotOptimize(trace.trace.token);
    });
}
void BM_Preset_Vllm_EveryStage(benchmark::State& state) { preset(state, "vllm"); }
void BM_Preset_LlamaCpp_EveryStage(benchmark::State& state) { preset(state, "llamacpp"); }

// DRY (llama.cpp's sampler, its own step) over a 200,000-id history: one id
// repeated (every position starts a repeat of the end: the worst case of a
// direct comparison, which is quadratic) and ids without repeats. Both are
// linear now (stage_dry.cpp).
void dry(benchmark::State& state, bool repeated) {
    const auto& w = workload();
    std::vector<std::int64_t> ids(200000);
    for (std::size_t i = 0; i < ids.size(); ++i) {
        ids[i] = static_cast<std::int64_t>(repeated ? 1000 : (i * 7919) % kLlama3VocabSize);
    }
    const Pipeline pipeline = custom_pipeline("dry");
    SamplingParams params;
    params.dry_multiplier = 0.8;
    params.seed = 1;
    const HistoryCounts counts = count_history({}, ids, w.logits.size());
    with_yardstick(state, w.logits, [&] {
        Pcg32 rng = stream(*params.seed, kSampleLabel);
        const PipelineTrace trace =
            run_pipeline(pipeline, PipelineInput{w.logits, params, {}, ids}, rng, *params.seed, 0, &counts);
        benchmark::DoNotOptimize(trace.trace.token);
    });
}
void BM_Dry_200k_Repeated(benchmark::State& state) { dry(state, true); }
void BM_Dry_200k_NoRepeats(benchmark::State& state) { dry(state, false); }

BENCHMARK(BM_ExpPass)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FullTrace_EveryStage)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Lean_EveryStage)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FullTrace_TopPOnly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FullTrace_Greedy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FullTrace_BroadTopP)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FullTrace_BroadTopP_50k)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Preset_Vllm_EveryStage)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Preset_LlamaCpp_EveryStage)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ExpPass_1M)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FullTrace_EveryStage_1M)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Dry_200k_Repeated)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Dry_200k_NoRepeats)->Unit(benchmark::kMillisecond);

void print_ratios(const RatioReporter& reporter) {
    reporter.print_table();
    const auto x = [&](const char* name) { return reporter.ratio(name); };
    // Each ratio is over the yardstick of its own row, so these compare like with like.
    if (x("BM_FullTrace_BroadTopP") > 0.0 && x("BM_FullTrace_TopPOnly") > 0.0) {
        std::printf("broad row (p 0.9 keeps 100,336) over the peaked row, top-p only: %.2fx\n",
                    x("BM_FullTrace_BroadTopP") / x("BM_FullTrace_TopPOnly"));
    }
    if (x("BM_FullTrace_BroadTopP_50k") > 0.0 && x("BM_FullTrace_TopPOnly") > 0.0) {
        std::printf("broad row (p 0.6 keeps 51,618) over the peaked row, top-p only: %.2fx\n",
                    x("BM_FullTrace_BroadTopP_50k") / x("BM_FullTrace_TopPOnly"));
    }
    if (x("BM_FullTrace_EveryStage_1M") > 0.0 && x("BM_FullTrace_EveryStage") > 0.0) {
        std::printf("time per id, V = 10^6 over V = 128,256, every stage: %.2fx\n",
                    x("BM_FullTrace_EveryStage_1M") / x("BM_FullTrace_EveryStage"));
    }
}

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
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    print_ratios(reporter);
    compare_with_numpy();
    return 0;
}
