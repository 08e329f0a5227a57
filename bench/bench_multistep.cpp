// Speculative decoding and beam search on Debian's English trigram model
// (V = 72,547): one speculative round with k = 4 (four bigram draft rows, five
// trigram target rows, each through the pipeline, the verification) and one
// beam step with w = 4 (four trigram rows, log_softmax, the best 2w each), by
// the rules of each preset, beside their parts (a model row, a step's exact
// distribution, the traced step it replaces). Each case is printed as a ratio
// to one f64 exp pass over the target's row, measured in the same run
// (bench/yardstick.h). Without the model installed it says so and exits.
#include <benchmark/benchmark.h>

#include <iostream>
#include <memory>

#include "bench/workloads.h"
#include "bench/yardstick.h"
#include "engine/generation/beam.h"
#include "engine/generation/speculative.h"
#include "engine/models/model_source.h"
#include "engine/models/ngram_model.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/pipeline_runner.h"

using namespace samplescope;
using bench::RatioReporter;
using bench::with_yardstick;
using bench::every_stage;

namespace {

constexpr const char* kPrompt = "the united states of";

struct Setup {
    std::shared_ptr<const NgramModel> target;
    std::shared_ptr<const NgramModel> draft;
    std::vector<PromptWord> prompt;
    std::vector<double> row;  // the target's row after the prompt: the yardstick's
};

const Setup& setup() {
    static const Setup s = [] {
        Setup out;
        out.target = NgramModel::load(default_ngram_model_path());
        out.draft = out.target->restricted(2);
        out.prompt = out.target->tokenize(kPrompt);
        std::vector<std::int64_t> ids;
        for (const auto& word : out.prompt) ids.push_back(word.id);
        out.target->next_logits({ids, ids.size()}, out.row);
        return out;
    }();
    return s;
}

void model_row(benchmark::State& state, bool trigram) {
    const Setup& s = setup();
    std::vector<std::int64_t> ids;
    for (const auto& word : s.prompt) ids.push_back(word.id);
    std::vector<double> row;
    const LanguageModel& model = trigram ? static_cast<const LanguageModel&>(*s.target) : *s.draft;
    with_yardstick(state, s.row, [&] {
        model.next_logits({ids, ids.size()}, row);
        benchmark::DoNotOptimize(row.data());
    });
}
void BM_ModelRow_Trigram(benchmark::State& state) { model_row(state, true); }
void BM_ModelRow_Bigram(benchmark::State& state) { model_row(state, false); }

// One position's distribution: the lean exact distribution speculation uses,
// and the traced step (with a preset's float32 rerun) it stands in for.
void position(benchmark::State& state, const char* pipeline, bool traced) {
    const Setup& s = setup();
    const Pipeline pipe = preset_pipeline(pipeline);
    const SamplingParams params = every_stage();
    with_yardstick(state, s.row, [&] {
        const PipelineInput input{s.row, params, {}, {}};
        if (traced) {
            Pcg32 rng = stream(1, kSampleLabel);
            benchmark::DoNotOptimize(run_pipeline(pipe, input, rng, 1, 0).trace.token);
        } else {
            benchmark::DoNotOptimize(exact_distribution(pipe, input).ids.size());
        }
    });
}
void BM_Position_Exact_Vllm(benchmark::State& state) { position(state, "vllm", false); }
void BM_Position_Traced_Vllm(benchmark::State& state) { position(state, "vllm", true); }
void BM_Position_Exact_Spec(benchmark::State& state) { position(state, "spec", false); }
void BM_Position_Traced_Spec(benchmark::State& state) { position(state, "spec", true); }
// FlashInfer's by-value top-k and top-p rules rank the whole row.
void BM_Position_Exact_FlashInferJoint(benchmark::State& state) { position(state, "flashinfer-joint", false); }

// One round from the prompt, k = 4: a copy of a prepared speculation runs it.
void spec_round(benchmark::State& state, const char* rules, const char* pipeline, const SamplingParams& params) {
    const Setup& s = setup();
    SpeculativeOptions options;
    options.k = 4;
    options.preset = &spec_preset(rules);
    options.stop_at_end = false;
    const Pipeline pipe = preset_pipeline(pipeline);
    SamplingParams seeded = params;
    std::uint64_t seed = 0;
    std::uint64_t accepted = 0;
    with_yardstick(state, s.row, [&] {
        seeded.seed = ++seed;  // a round of each seed: the acceptance varies as it does in use
        Speculation speculation(s.target, s.draft, pipe, seeded, s.prompt, options);
        accepted += speculation.round().verification.accepted;
    });
    state.counters["accepted/round"] = static_cast<double>(accepted) / static_cast<double>(state.iterations());
}
void BM_SpecRound_K4_Spec_Default(benchmark::State& state) {
    SamplingParams p;
    p.seed = 1;
    spec_round(state, "spec", "spec", p);
}
void BM_SpecRound_K4_Spec_EveryStage(benchmark::State& state) { spec_round(state, "spec", "spec", every_stage()); }
void BM_SpecRound_K4_Vllm_EveryStage(benchmark::State& state) { spec_round(state, "vllm", "vllm", every_stage()); }
void BM_SpecRound_K4_FlashInfer_EveryStage(benchmark::State& state) {
    spec_round(state, "flashinfer", "spec", every_stage());
}

// One step with four beams (the second step from the prompt), from a copy.
void beam_step(benchmark::State& state, BeamRules rules) {
    const Setup& s = setup();
    BeamOptions options;
    options.width = 4;
    options.steps = 10;
    options.rules = rules;
    BeamSearch prepared(s.target, s.prompt, options);
    prepared.step();
    with_yardstick(state, s.row, [&] {
        BeamSearch search = prepared;
        benchmark::DoNotOptimize(search.step().candidates.size());
    });
}
void BM_BeamStep_W4_Hf(benchmark::State& state) { beam_step(state, BeamRules::Hf); }
void BM_BeamStep_W4_Vllm(benchmark::State& state) { beam_step(state, BeamRules::Vllm); }

BENCHMARK(BM_ModelRow_Trigram)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ModelRow_Bigram)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Position_Exact_Spec)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Position_Traced_Spec)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Position_Exact_Vllm)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Position_Traced_Vllm)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Position_Exact_FlashInferJoint)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SpecRound_K4_Spec_Default)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SpecRound_K4_Spec_EveryStage)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SpecRound_K4_Vllm_EveryStage)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SpecRound_K4_FlashInfer_EveryStage)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BeamStep_W4_Hf)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BeamStep_W4_Vllm)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
    if (!default_ngram_model_installed()) {
        std::cout << "bench_multistep: no n-gram model at " << default_ngram_model_path() << " (install "
                  << kNgramModelPackage << "); nothing to measure.\n";
        return 0;
    }
    setup();  // the model's load stays out of every case
    benchmark::Initialize(&argc, argv);
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    reporter.print_table();
    std::printf("V = %zu, prompt \"%s\"\n", setup().row.size(), kPrompt);
    return 0;
}
