// The logit-bias unit: each listed id's logit plus its bias, before every
// other step of llama.cpp's chain. Defined from ggml-org/llama.cpp
// src/llama-sampling.cpp llama_sampler_logit_bias_apply (the bias is added to
// the token's logit; -inf bans it) and common/sampling.cpp common_sampler_init
// (the logit-bias sampler is the chain's first). Repeated ids add up, as
// repeated entries do there.
#include <algorithm>
#include <map>

#include "engine/stages/row_state.h"
#include "engine/stages/stage_unit.h"

namespace samplescope {

namespace {

bool gate(const SamplingParams& p, std::size_t) { return !p.logit_bias.empty(); }

bool logit_bias(RowState& row, const PipelineStep&, StepReport&, StageTrace&) {
    if (!gate(row.params, row.vocab)) return false;
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

constexpr StageUnit kUnit{{}, listens_always, logit_bias};

// The list is its one parameter: no row of kParams.
constexpr ListParamInfo kStageLists[] = {
    {.key = "logit_bias", .label = "Logit bias", .syntax = "\"id:bias,...\"", .role = ParamRole::Switch,
     .set = [](const SamplingParams& p) { return !p.logit_bias.empty(); }, .on = gate,
     .text = [](const SamplingParams& p) { return format_logit_bias(p.logit_bias); },
     .parse = [](SamplingParams& p, std::string_view text) { p.logit_bias = parse_logit_bias(text); },
     .check = [](const SamplingParams& p, std::size_t vocab) { check_logit_bias(p.logit_bias, vocab); },
     .validate = [](const SamplingParams& p) { validate_logit_bias(p.logit_bias); },
     .summary = "logit bias"},
};

constexpr RuleInfo kStageRules[] = {
    {Rule::LogitBiasAdd, Stage::LogitBias, "add", "l + bias", "llamacpp",
     "For each listed (id, bias): l[id] += bias; a bias of -inf bans the id. Applied first, before the penalties.",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_logit_bias_apply; common/sampling.cpp "
     "common_sampler_init (logit bias added to the chain first)",
     false},
};

}  // namespace

extern const StageDescriptor stage_logit_bias_descriptor;
constinit const StageDescriptor stage_logit_bias_descriptor{
    .stage = Stage::LogitBias,
    .name = "logit_bias",
    .title = "Logit bias",
    .summary = "Each listed id's logit plus its bias; a bias of -inf bans the id.",
    .changes_logits = true,
    .mark = PlotMark::LogitBiasList,
    .lists = kStageLists,
    .rules = kStageRules,
    .gate = gate,
    .off_reason = [](const SamplingParams&, std::size_t) {
        return std::string("Off: no logit bias given.\nThe distribution passes through unchanged.");
    },
    .unit = &kUnit,
};

}  // namespace samplescope
