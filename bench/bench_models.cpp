// The n-gram model behind generation (Debian's en-us trigram model, V =
// 72,547): one history's row from the successor index, the same row scored
// word by word through sphinxbase, a 100-token generation with every stage
// on, and loading the model; each printed as a ratio to one f64 exp pass over
// a row of the same V, measured in the same run (bench/yardstick.h).
#include <benchmark/benchmark.h>

#include <iostream>
#include <random>

#include "bench/workloads.h"
#include "bench/yardstick.h"
#include "engine/generation/generation.h"
#include "engine/models/model_source.h"
#include "engine/models/ngram_model.h"
#include "engine/models/sphinx_scorer.h"
#include "engine/pipelines/pipeline_presets.h"

using namespace samplescope;
using namespace samplescope::bench;

namespace {

const NgramModel& model() {
    static const auto loaded = NgramModel::load(default_ngram_model_path());
    return *loaded;
}

std::vector<std::uint32_t> history_of(const char* text) {
    const auto words = model().tokenize(text);
    std::vector<std::int64_t> ids;
    for (const auto& w : words) ids.push_back(w.id);
    return model().history_of({ids, ids.size()});
}

// The yardstick's row: the model's own row for "the united".
const std::vector<double>& yardstick_row() {
    static const std::vector<double> row = [] {
        std::vector<double> out;
        model().row_for_history(history_of("the united"), out);
        return out;
    }();
    return row;
}

void row_for(benchmark::State& state, const char* text) {
    const auto history = history_of(text);
    std::vector<double> row;
    with_yardstick(state, yardstick_row(), [&] {
        model().row_for_history(history, row);
        benchmark::DoNotOptimize(row.data());
    });
}

void BM_ExpPass(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(exp_pass_once(yardstick_row()));
}
void BM_Row_TheUnited(benchmark::State& state) { row_for(state, "the united"); }
void BM_Row_OfThe(benchmark::State& state) { row_for(state, "of the"); }  // h1 "the": the most successors
void BM_Row_SentenceStart(benchmark::State& state) { row_for(state, "."); }

// 256 histories of two random words, taken in turn.
void BM_Row_RandomHistories(benchmark::State& state) {
    std::mt19937_64 rng(1);
    std::uniform_int_distribution<std::uint32_t> any(0, static_cast<std::uint32_t>(model().vocab_size() - 1));
    std::vector<std::vector<std::uint32_t>> histories(256);
    for (auto& h : histories) h = {any(rng), any(rng)};
    std::vector<double> row;
    std::size_t i = 0;
    with_yardstick(state, yardstick_row(), [&] {
        model().row_for_history(histories[i++ % histories.size()], row);
        benchmark::DoNotOptimize(row.data());
    });
}

// The same row through sphinxbase, one ngram_tg_score per word.
void BM_Row_SphinxbaseWordByWord(benchmark::State& state) {
    if (!SphinxScorer::available()) {
        state.SkipWithError("this build has no libsphinxbase");
        return;
    }
    static SphinxScorer scorer(default_ngram_model_path());
    const auto history = history_of("the united");
    std::vector<std::int32_t> scores;
    with_yardstick(state, yardstick_row(), [&] {
        scorer.scores(history, scores);
        benchmark::DoNotOptimize(scores.data());
    });
}

// 100 tokens from "the united", a row and a full trace each.
void generate(benchmark::State& state, const char* pipeline) {
    static const auto shared = NgramModel::load(default_ngram_model_path());
    const auto prompt = shared->tokenize("the united");
    GenerationOptions options;
    options.stop_at_end = false;
    with_yardstick(state, yardstick_row(), [&] {
        Generation generation(shared, preset_pipeline(pipeline), every_stage(), prompt, options);
        for (int i = 0; i < 100; ++i) benchmark::DoNotOptimize(generation.step().token);
    });
}
void BM_Generate100_EveryStage_Spec(benchmark::State& state) { generate(state, "spec"); }
void BM_Generate100_EveryStage_Vllm(benchmark::State& state) { generate(state, "vllm"); }

void BM_LoadModel(benchmark::State& state) {
    with_yardstick(state, yardstick_row(), [&] {
        benchmark::DoNotOptimize(NgramModel::load(default_ngram_model_path()).get());
    });
}

}  // namespace

BENCHMARK(BM_ExpPass)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Row_TheUnited)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Row_OfThe)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Row_SentenceStart)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Row_RandomHistories)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Row_SphinxbaseWordByWord)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Generate100_EveryStage_Spec)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Generate100_EveryStage_Vllm)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LoadModel)->Unit(benchmark::kMillisecond)->Iterations(5);

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (!default_ngram_model_installed()) {
        std::cout << "bench_models: no n-gram model at " << default_ngram_model_path()
                  << " (install Debian's pocketsphinx-en-us); nothing to time\n";
        return 0;
    }
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    reporter.print_table();
    return 0;
}
