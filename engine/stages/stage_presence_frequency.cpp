// The presence and frequency penalties (additive), with the rules that say
// which occurrences count. Sources of every rule: kStageRules below.
#include <string>
#include <vector>

#include "engine/core/element_math.h"
#include "engine/core/gates.h"
#include "engine/stages/row_state.h"
#include "engine/stages/stage_unit.h"

namespace samplescope {

namespace {

bool gate(const SamplingParams& p, std::size_t) {
    return gate_presence_frequency(p.presence_penalty, p.frequency_penalty);
}

bool presence_frequency(RowState& row, const PipelineStep& step, StepReport&, StageTrace&) {
    if (!gate(row.params, row.vocab) || !penalty_window_open(row.pipeline, step)) return false;
    const double f = row.params.frequency_penalty;
    const double pr = row.params.presence_penalty;
    if (step.rule == Rule::PresenceFrequencyOutput) {
        const auto& counts = row.history.output_counts;
        std::vector<std::int32_t> ids;
        ids.reserve(counts.size());
        for (const auto& [id, count] : counts) ids.push_back(id);
        row.penalise(ids, "presence/frequency penalty", [&](double logit, std::size_t i) {
            const auto c = static_cast<double>(counts[i].second);
            if (row.arithmetic == Arithmetic::F64) return apply_presence_frequency(logit, c, f, pr);
            // The stacks subtract the frequency term, then the presence term, each in float32.
            return row.r(row.r(logit - row.r(f * c)) - pr);
        });
    } else {
        // llama.cpp: logit -= c * freq + (c > 0) * present, in one subtraction.
        const PenaltyScope scope = last_n_scope(row);
        row.penalise(scope.ids, "presence/frequency penalty", [&](double logit, std::size_t i) {
            return logit - row.r(row.r(static_cast<double>(scope.counts[i]) * f) + pr);
        });
    }
    return true;
}

constexpr Param kReads[] = {Param::PresencePenalty, Param::FrequencyPenalty};
constexpr StageUnit kUnit{kReads, penalty_window_open, presence_frequency};

constexpr ParamInfo kStageParams[] = {
    {.param = Param::PresencePenalty, .key = "presence_penalty", .label = "Presence penalty", .default_value = 0.0,
     .slider_min = -2.0, .slider_max = 2.0, .formula = "For ids generated at least once: l - presence. Off at 0.",
     .valid_range = "finite", .real = &SamplingParams::presence_penalty, .contract = true, .role = ParamRole::Switch,
     .on = [](const SamplingParams& p, std::size_t) { return p.presence_penalty != 0.0; }},
    {.param = Param::FrequencyPenalty, .key = "frequency_penalty", .label = "Frequency penalty", .default_value = 0.0,
     .slider_min = -2.0, .slider_max = 2.0, .formula = "For ids generated c times: l - frequency x c. Off at 0.",
     .valid_range = "finite", .real = &SamplingParams::frequency_penalty, .contract = true, .role = ParamRole::Switch,
     .on = [](const SamplingParams& p, std::size_t) { return p.frequency_penalty != 0.0; }},
};

constexpr RuleInfo kStageRules[] = {
    {Rule::PresenceFrequencyOutput, Stage::PresenceFrequency, "output", "Output counts (OpenAI)",
     "spec, vllm, sglang", "l - frequency x c - presence, c = times generated.",
     "vllm-project/vllm vllm/model_executor/layers/utils.py apply_penalties; sgl-project/sglang "
     "python/sglang/srt/sampling/penaltylib/frequency_penalty.py, presence_penalty.py",
     false},
    {Rule::PresenceFrequencyLastN, Stage::PresenceFrequency, "last_n", "Counts in the last N", "llamacpp",
     "l - (c x frequency + presence), c = count among the last N accepted tokens.",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_penalties_apply", false},
};

}  // namespace

extern const StageDescriptor stage_presence_frequency_descriptor;
constinit const StageDescriptor stage_presence_frequency_descriptor{
    .stage = Stage::PresenceFrequency,
    .name = "presence_frequency",
    .title = "Presence / frequency",
    .summary = "Ids generated c > 0 times lose frequency x c + presence.",
    .contract = true,
    .changes_logits = true,
    .params = kStageParams,
    .rules = kStageRules,
    .gate = gate,
    .off_reason = [](const SamplingParams& p, std::size_t) {
        return off_because("presence_penalty = " + format_number(p.presence_penalty) +
                               ", frequency_penalty = " + format_number(p.frequency_penalty),
                           "off at 0", false);
    },
    .unit = &kUnit,
};

}  // namespace samplescope
