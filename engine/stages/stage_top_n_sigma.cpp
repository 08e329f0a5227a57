// The top-n-sigma unit: keep the logits within n standard deviations of the
// largest, as current llama.cpp defines it (ggml-org/llama.cpp
// src/llama-sampling.cpp llama_sampler_top_n_sigma_apply): over the finite
// logits of the candidates (-inf ones take no part in the mean or the
// deviation; here the kept set holds only finite logits) it takes the
// maximum, the mean and the population standard deviation sigma
// (sqrt(sum (l - mean)^2 / count)), and drops every l < max - n x sigma. Off
// when n <= 0, and a single candidate passes unchanged, as there.
#include <algorithm>
#include <array>
#include <cmath>

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

bool top_n_sigma(RowState& row, const PipelineStep&, StepReport& report, StageTrace& shown) {
    if (!uses_top_n_sigma(row.params)) return false;
    const TruncationView view = view_of(row);
    if (view.candidates.size() <= 1) return true;  // llama.cpp returns before computing anything
    apply_outcome(row, decide(view), report, shown);
    return true;
}

constexpr std::array<Param, 1> kReads{Param::TopNSigma};

}  // namespace

const StageUnit kTopNSigmaUnit{Stage::TopNSigma, kReads, listens_always, top_n_sigma};

}  // namespace samplescope
