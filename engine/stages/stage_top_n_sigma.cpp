// The top-n-sigma unit: keep the logits within n standard deviations of the
// largest, as current llama.cpp defines it (ggml-org/llama.cpp
// src/llama-sampling.cpp llama_sampler_top_n_sigma_apply): over the finite
// logits of the candidates (-inf ones take no part in the mean or the
// deviation; here the kept set holds only finite logits) it takes the
// maximum, the mean and the population standard deviation sigma
// (sqrt(sum (l - mean)^2 / count)), and drops every l < max - n x sigma. Off
// when n <= 0, and a single candidate passes unchanged, as there.
#include <algorithm>
#include <cmath>

#include "engine/core/gates.h"
#include "engine/stages/stage_unit.h"
#include "engine/stages/truncation.h"

namespace samplescope {

namespace {

TruncationOutcome decide(const TruncationView& view) {
    TruncationOutcome out;
    const auto r = [&view](double x) { return in_arithmetic(view.arithmetic, x); };
    const std::size_t count = view.candidates.size();
    double max_logit = -HUGE_VAL;
    double sum = 0.0;
    for (const auto id : view.candidates) {
        max_logit = std::max(max_logit, view.logits[id]);
        sum = r(sum + view.logits[id]);
    }
    const double mean = r(sum / static_cast<double>(count));
    double acc = 0.0;
    for (const auto id : view.candidates) {
        const double d = view.logits[id] - mean;
        acc = r(acc + d * d);
    }
    const double sigma = r(std::sqrt(r(acc / static_cast<double>(count))));
    const double floor = r(max_logit - r(view.params.top_n_sigma * sigma));
    for (const auto id : view.candidates) {
        if (!(view.logits[id] < floor)) out.kept.push_back(id);
        if (near_threshold(view.logits[id], floor)) out.near_boundary = true;
    }
    out.shown.max_logit = max_logit;
    out.shown.logit_mean = mean;
    out.shown.logit_sigma = sigma;
    out.shown.logit_floor = floor;
    return out;
}

bool gate(const SamplingParams& p, std::size_t) { return gate_top_n_sigma(p.top_n_sigma); }

bool top_n_sigma(RowState& row, const PipelineStep&, StepReport& report, StageTrace& shown) {
    if (!gate(row.params, row.vocab)) return false;
    const TruncationView view = view_of(row);
    if (view.candidates.size() <= 1) return true;  // llama.cpp returns before computing anything
    apply_outcome(row, decide(view), report, shown);
    return true;
}

constexpr Param kReads[] = {Param::TopNSigma};
constexpr StageUnit kUnit{kReads, listens_always, top_n_sigma};

constexpr ParamInfo kStageParams[] = {
    {.param = Param::TopNSigma, .key = "top_n_sigma", .label = "Top-n-sigma", .default_value = -1.0,
     .slider_min = -1.0, .slider_max = 5.0,
     .formula = "Keep logits >= max l - n x sigma, sigma the standard deviation of the candidates' logits (llama.cpp). "
                "Off at n <= 0.",
     .valid_range = "finite", .real = &SamplingParams::top_n_sigma, .role = ParamRole::Switch, .on = gate,
     .summary = "top-n-sigma"},
};

constexpr RuleInfo kStageRules[] = {
    {Rule::TopNSigmaLlamaCpp, Stage::TopNSigma, "llamacpp", "l >= max - n sigma", "llamacpp",
     "Over the finite logits: max, mean and population sigma; drop l < max - n x sigma. One candidate passes.",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_top_n_sigma_apply", false},
};

}  // namespace

extern const StageDescriptor stage_top_n_sigma_descriptor;
constinit const StageDescriptor stage_top_n_sigma_descriptor{
    .stage = Stage::TopNSigma,
    .name = "top_n_sigma",
    .title = "Top-n-sigma",
    .summary = "Keep logits >= max l - n x sigma of the candidates' logits.",
    .truncates = true,
    .mark = PlotMark::LogitFloor,
    .params = kStageParams,
    .rules = kStageRules,
    .gate = gate,
    .off_reason = [](const SamplingParams& p, std::size_t) {
        return off_because("top_n_sigma = " + format_number(p.top_n_sigma), "off at <= 0", true);
    },
    .unit = &kUnit,
};

}  // namespace samplescope
