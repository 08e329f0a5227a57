#include "engine/pipelines/request.h"

namespace samplescope {

Request::Request(SamplingParams params, std::vector<std::int64_t> prompt_ids, std::vector<std::int64_t> output_ids)
    : params_(params),
      seed_(params.seed.value_or(choose_seed())),
      prompt_(std::move(prompt_ids)),
      output_(std::move(output_ids)),
      initial_output_(output_),
      rng_(stream(seed_, kSampleLabel)) {
    validate(params_);
    params_.seed = seed_;
}

void Request::skip_draws(std::uint64_t n) {
    rng_.skip_draws(n);
    draws_ += n;
}

void Request::set_params(const SamplingParams& params) {
    validate(params);
    params_ = params;
    params_.seed = seed_;
}

SampleTrace Request::step(std::span<const double> logits) {
    const HistoryCounts history = count_history(prompt_, output_, logits.size());
    Pcg32 rng = rng_;  // committed only when the step succeeds
    SampleTrace trace = trace_step(StepInput{logits, params_, history}, rng, seed_, draws_);
    rng_ = rng;
    draws_ = trace.draws_consumed;
    output_.push_back(trace.token);
    return trace;
}

SampleResult Request::step_lean(std::span<const double> logits) {
    const HistoryCounts history = count_history(prompt_, output_, logits.size());
    Pcg32 rng = rng_;
    const SampleResult result = sample_step(StepInput{logits, params_, history}, rng);
    rng_ = rng;
    if (result.u) ++draws_;
    output_.push_back(result.token);
    return result;
}

void Request::reset() {
    rng_ = stream(seed_, kSampleLabel);
    draws_ = 0;
    output_ = initial_output_;
}

}  // namespace samplescope
