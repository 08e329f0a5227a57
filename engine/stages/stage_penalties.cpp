// The penalty units: repetition (multiplicative) and presence/frequency
// (additive), with the rules that say which ids of the history each covers.
// Sources of every rule: kRules in engine/stages/pipeline.h.
#include <algorithm>
#include <array>
#include <map>

#include "engine/core/element_math.h"
#include "engine/stages/row_state.h"
#include "engine/stages/stage_unit.h"

namespace samplescope {

namespace {

// The ids a last-N rule covers, with their counts: llama.cpp's ring buffer of
// the last N accepted tokens, the prompt's tail first
// (ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_penalties_apply).
struct PenaltyScope {
    std::vector<std::int32_t> ids;       // distinct, ascending
    std::vector<std::uint32_t> counts;   // aligned with ids, each > 0
};

PenaltyScope last_n_scope(const RowState& row) {
    const auto n = static_cast<std::size_t>(row.pipeline.penalty_last_n);
    const std::size_t from_output = std::min(n, row.input.output_ids.size());
    const std::size_t from_prompt = std::min(n - from_output, row.input.prompt_ids.size());
    std::map<std::int32_t, std::uint32_t> counts;
    for (const auto id : row.input.prompt_ids.last(from_prompt)) ++counts[static_cast<std::int32_t>(id)];
    for (const auto id : row.input.output_ids.last(from_output)) ++counts[static_cast<std::int32_t>(id)];
    PenaltyScope scope;
    for (const auto& [id, count] : counts) {
        scope.ids.push_back(id);
        scope.counts.push_back(count);
    }
    return scope;
}

bool window_open(const Pipeline& pipeline, const PipelineStep& step) {
    const bool windowed = step.rule == Rule::RepetitionLastN || step.rule == Rule::PresenceFrequencyLastN;
    return !windowed || pipeline.penalty_last_n > 0;
}

bool repetition(RowState& row, const PipelineStep& step, StepReport&, StageTrace&) {
    if (!uses_repetition_penalty(row.params) || !window_open(row.pipeline, step)) return false;
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

bool presence_frequency(RowState& row, const PipelineStep& step, StepReport&, StageTrace&) {
    if (!uses_presence_frequency(row.params) || !window_open(row.pipeline, step)) return false;
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

constexpr std::array<Param, 1> kRepetitionReads{Param::RepetitionPenalty};
constexpr std::array<Param, 2> kPresenceFrequencyReads{Param::PresencePenalty, Param::FrequencyPenalty};

}  // namespace

const StageUnit kRepetitionPenaltyUnit{Stage::RepetitionPenalty, kRepetitionReads, window_open, repetition};
const StageUnit kPresenceFrequencyUnit{Stage::PresenceFrequency, kPresenceFrequencyReads, window_open,
                                       presence_frequency};

}  // namespace samplescope
