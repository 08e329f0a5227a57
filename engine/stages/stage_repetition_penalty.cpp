// The repetition penalty (multiplicative), with the rules that say which ids
// of the history it covers. Sources of every rule: kStageRules below.
#include <string>
#include <vector>

#include "engine/core/element_math.h"
#include "engine/core/gates.h"
#include "engine/stages/row_state.h"
#include "engine/stages/stage_unit.h"

namespace samplescope {

namespace {

bool gate(const SamplingParams& p, std::size_t) { return gate_repetition(p.repetition_penalty); }

bool repetition(RowState& row, const PipelineStep& step, StepReport&, StageTrace&) {
    if (!gate(row.params, row.vocab) || !penalty_window_open(row.pipeline, step)) return false;
    const double r = row.params.repetition_penalty;
    // One sign test everywhere: vLLM and the contract divide l > 0, HF and
    // SGLang multiply l < 0, llama.cpp multiplies l <= 0; at l = 0 every form gives 0.
    const auto apply = [r](double logit, std::size_t) { return apply_repetition_penalty(logit, r); };
    if (step.rule == Rule::RepetitionContext) {
        row.penalise(row.history.context_ids, "repetition_penalty", apply);
    } else if (step.rule == Rule::RepetitionOutputOnly) {
        std::vector<std::int32_t> ids;
        ids.reserve(row.history.output_counts.size());
        for (const auto& [id, count] : row.history.output_counts) ids.push_back(id);
        row.penalise(ids, "repetition_penalty", apply);
    } else {
        row.penalise(last_n_scope(row).ids, "repetition_penalty", apply);
    }
    return true;
}

constexpr Param kReads[] = {Param::RepetitionPenalty};
constexpr StageUnit kUnit{kReads, penalty_window_open, repetition};

constexpr ParamInfo kStageParams[] = {
    {.param = Param::RepetitionPenalty, .key = "repetition_penalty", .label = "Repetition penalty",
     .default_value = 1.0, .slider_min = 0.5, .slider_max = 2.0,
     .formula = "For ids in prompt or output: l / r if l > 0, else l * r. Off at 1.", .valid_range = "> 0 and finite",
     .real = &SamplingParams::repetition_penalty, .min = 0.0, .min_open = true, .contract = true,
     .role = ParamRole::Switch, .on = gate},
};

constexpr RuleInfo kStageRules[] = {
    {Rule::RepetitionContext, Stage::RepetitionPenalty, "context", "Prompt and output ids", "spec, vllm, hf",
     "Every distinct id of prompt and output: l > 0 ? l / r : l * r.",
     "vllm-project/vllm vllm/model_executor/layers/utils.py apply_penalties; huggingface/transformers "
     "src/transformers/generation/logits_process.py RepetitionPenaltyLogitsProcessor",
     false},
    {Rule::RepetitionOutputOnly, Stage::RepetitionPenalty, "output_only", "Output ids only", "sglang",
     "Only ids generated so far; the prompt is not penalised.",
     "sgl-project/sglang python/sglang/srt/sampling/penaltylib/repetition_penalty.py _cumulate_output_tokens",
     false},
    {Rule::RepetitionLastN, Stage::RepetitionPenalty, "last_n", "Last N of prompt + output", "llamacpp",
     "Ids among the last N accepted tokens (prompt tail and output), N = penalty_last_n.",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_penalties_apply", false},
};

}  // namespace

extern const StageDescriptor stage_repetition_penalty_descriptor;
constinit const StageDescriptor stage_repetition_penalty_descriptor{
    .stage = Stage::RepetitionPenalty,
    .name = "repetition_penalty",
    .title = "Repetition penalty",
    .summary = "Ids seen in prompt or output: positive logits divided by r, others multiplied by r.",
    .contract = true,
    .changes_logits = true,
    .params = kStageParams,
    .rules = kStageRules,
    .gate = gate,
    .off_reason = [](const SamplingParams& p, std::size_t) {
        return off_because("repetition_penalty = " + format_number(p.repetition_penalty), "off at 1", false);
    },
    .unit = &kUnit,
};

}  // namespace samplescope
