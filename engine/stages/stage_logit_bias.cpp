// The logit-bias unit: each listed id's logit plus its bias, before every
// other step of llama.cpp's chain. Defined from ggml-org/llama.cpp
// src/llama-sampling.cpp llama_sampler_logit_bias_apply (the bias is added to
// the token's logit; -inf bans it) and common/sampling.cpp common_sampler_init
// (the logit-bias sampler is the chain's first). Repeated ids add up, as
// repeated entries do there.
#include <algorithm>
#include <array>
#include <map>

#include "engine/stages/row_state.h"
#include "engine/stages/stage_unit.h"

namespace samplescope {

namespace {

bool logit_bias(RowState& row, const PipelineStep&, StepReport&, StageTrace&) {
    if (!uses_logit_bias(row.params)) return false;
    check_logit_bias(row.params.logit_bias, row.vocab);
    // One sum per id, ids ascending (penalise takes distinct ids).
    std::map<std::int32_t, double> total;
    for (const auto& entry : row.params.logit_bias) {
        const auto id = static_cast<std::int32_t>(entry.id);
        const auto [at, fresh] = total.emplace(id, row.r(entry.bias));
        if (!fresh) at->second = row.r(at->second + row.r(entry.bias));
    }
    std::vector<std::int32_t> ids;
    std::vector<double> bias;
    ids.reserve(total.size());
    bias.reserve(total.size());
    for (const auto& [id, b] : total) {
        ids.push_back(id);
        bias.push_back(b);
    }
    row.penalise(ids, "logit_bias", [&](double logit, std::size_t i) { return logit + bias[i]; });
    return true;
}

}  // namespace

// No row of kParams: the list is SamplingParams::logit_bias, and the runner
// reports it as ignored by a pipeline without this step.
const StageUnit kLogitBiasUnit{Stage::LogitBias, {}, listens_always, logit_bias};

}  // namespace samplescope
