#include "engine/pipelines/request.h"

#include "engine/base/number_text.h"
#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/pipeline_runner.h"

namespace samplescope {

Request::Request(SamplingParams params, std::vector<std::int64_t> prompt_ids, std::vector<std::int64_t> output_ids)
    : Request(preset_pipeline("spec"), params, std::move(prompt_ids), std::move(output_ids)) {}

Request::Request(Pipeline pipeline, SamplingParams params, std::vector<std::int64_t> prompt_ids,
                 std::vector<std::int64_t> output_ids)
    : pipeline_(std::move(pipeline)),
      params_(params),
      seed_(params.seed.value_or(choose_seed())),
      prompt_(std::move(prompt_ids)),
      output_(std::move(output_ids)),
      initial_output_(output_),
      rng_(stream(seed_, kSampleLabel)) {
    validate(params_);
    check_pipeline(pipeline_);
    params_.seed = seed_;
}

void Request::skip_draws(std::uint64_t n) {
    check_draw_counter(draws_, n, "skip_draws");
    rng_.skip_draws(n);
    draws_ += n;
}

void Request::set_params(const SamplingParams& params) {
    validate(params);
    params_ = params;
    params_.seed = seed_;
}

PipelineTrace Request::step_pipeline(std::span<const double> logits) {
    check_draw_counter(draws_, 1, "skip_draws");  // the draw this step may take must fit the counter
    Pcg32 rng = rng_;  // committed only when the step succeeds
    PipelineInput input{logits, params_, prompt_, output_};
    input.mirostat_mu = mirostat_mu_;
    PipelineTrace trace = run_pipeline(pipeline_, input, rng, seed_, draws_);
    rng_ = rng;
    if (trace.mirostat) mirostat_mu_ = trace.mirostat->mu_after;
    draws_ = trace.trace.draws_consumed;
    output_.push_back(trace.trace.token);
    return trace;
}

void Request::reset() {
    rng_ = stream(seed_, kSampleLabel);
    draws_ = 0;
    output_ = initial_output_;
    mirostat_mu_.reset();
}

}  // namespace samplescope
