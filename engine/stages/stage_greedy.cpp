// The greedy unit: which temperature switches the draw off, per stack, and the
// argmax with ties to the lowest id. Sources: kStageRules below.
#include <string>

#include "engine/core/gates.h"
#include "engine/stages/row_state.h"
#include "engine/stages/stage_unit.h"

namespace samplescope {

namespace {

bool triggered(Rule rule, double t, StepReport& report) {
    switch (rule) {
        // vLLM tests T < _SAMPLING_EPS (1e-5) after raising 0 < T < 0.01 to
        // 0.01, so only T = 0 is greedy.
        case Rule::GreedyVllm: return t == 0.0;
        case Rule::GreedySglang:
            if (t < 1e-6) report.note = "T < 1e-6 is T = 1, top_k = 1; a batch of this row alone takes argmax";
            return t < 1e-6;
        case Rule::GreedyHf:
            if (t == 0.0) report.note = "T = 0 read as do_sample=False";
            return t == 0.0;
        default: return gate_greedy(t);
    }
}

bool greedy(RowState& row, const PipelineStep& step, StepReport& report, StageTrace& shown) {
    if (!triggered(step.rule, row.params.temperature, report)) return false;
    // The greedy stage shows the one token; the skipped stages after it keep
    // showing the set greedy chose from.
    const IdList& kept = row.kept();
    row.greedy_token = argmax_lowest_id(row.logits().data(), kept.data(), static_cast<std::int64_t>(kept.size()));
    shown.kept = std::make_shared<const IdList>(IdList{row.greedy_token});
    shown.probs = std::make_shared<const Values>(Values{1.0});
    return true;
}

constexpr Param kReads[] = {Param::Temperature};
constexpr StageUnit kUnit{kReads, listens_always, greedy};

constexpr RuleInfo kStageRules[] = {
    {Rule::GreedyContract, Stage::Greedy, "contract", "T = 0", "spec, flashinfer-*",
     "T == 0: argmax, ties to the lowest id, no draw.", "sampling contract section 2, step 5", false},
    {Rule::GreedyVllm, Stage::Greedy, "vllm", "T = 0", "vllm",
     "T < 1e-5 after 0 < T < 0.01 was raised to 0.01, so only T = 0: argmax of the penalised logits, ties to the "
     "first index, no draw.",
     "vllm-project/vllm vllm/sampling_params.py SamplingParams.__post_init__ (_MAX_TEMP, then _SAMPLING_EPS); "
     "vllm/v1/sample/sampler.py Sampler.sample",
     false},
    {Rule::GreedySglang, Stage::Greedy, "sglang", "T < 1e-6", "sglang",
     "T < 1e-6: T := 1, top_k := 1; an all-greedy batch takes argmax (ties to the first index), no draw.",
     "sgl-project/sglang python/sglang/srt/sampling/sampling_params.py SamplingParams.__init__; "
     "python/sglang/srt/layers/sampler.py Sampler.forward",
     false},
    {Rule::GreedyHf, Stage::Greedy, "hf", "do_sample = False", "hf",
     "T = 0 stands for do_sample=False: argmax of the processed scores, ties to the first index, no draw.",
     "huggingface/transformers src/transformers/generation/utils.py GenerationMixin._sample", false},
};

std::string off_reason(const SamplingParams& p, std::size_t) {
    return "Off: temperature = " + format_number(p.temperature) +
           " > 0, so a token is drawn.\nGreedy (argmax, no draw) only at T = 0.";
}

}  // namespace

// Temperature's row is the temperature stage's: greedy reads it (kReads) and owns none.
extern const StageDescriptor stage_greedy_descriptor;
constinit const StageDescriptor stage_greedy_descriptor{
    .stage = Stage::Greedy,
    .name = "greedy",
    .title = "Greedy",
    .summary = "T = 0: the largest logit wins (ties to the lowest id); no draw.",
    .contract = true,
    .rules = kStageRules,
    .gate = [](const SamplingParams& p, std::size_t) { return gate_greedy(p.temperature); },
    .off_reason = off_reason,
    .unit = &kUnit,
};

}  // namespace samplescope
