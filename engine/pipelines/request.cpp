#include "engine/pipelines/request.h"

#include <algorithm>
#include <cstdint>

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
      seed_(seed_or_chosen(params.seed)),
      prompt_(std::move(prompt_ids)),
      output_(std::move(output_ids)),
      initial_output_(output_),
      rng_(stream(seed_, kSampleLabel)) {
    validate(params_);
    check_pipeline(pipeline_);
    params_.seed = seed_;
    for (const auto& ids : {std::span<const std::int64_t>(prompt_), std::span<const std::int64_t>(output_)}) {
        for (const auto id : ids) {
            min_id_ = std::min(min_id_, id);
            max_id_ = std::max(max_id_, id);
        }
    }
    // Counted without a V (each step checks the ids against its own); an id
    // outside int32 is left for that check to name.
    if (min_id_ >= 0 && max_id_ <= INT32_MAX) {
        history_ = count_history(prompt_, output_, static_cast<std::size_t>(max_id_) + 1);
    }
    initial_history_ = history_;
    initial_min_id_ = min_id_;
    initial_max_id_ = max_id_;
}

namespace {

void add_to_history(HistoryCounts& history, std::int32_t token) {
    auto& counts = history.output_counts;
    const auto at = std::lower_bound(counts.begin(), counts.end(), token,
                                     [](const auto& entry, std::int32_t id) { return entry.first < id; });
    if (at != counts.end() && at->first == token) {
        ++at->second;
    } else {
        counts.insert(at, {token, 1U});
    }
    auto& context = history.context_ids;
    const auto where = std::lower_bound(context.begin(), context.end(), token);
    if (where == context.end() || *where != token) context.insert(where, token);
}

}  // namespace

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

PipelineTrace Request::step_pipeline(std::span<const double> logits, LogprobMemo* memo) {
    check_draw_counter(draws_, 1, "skip_draws");  // the draw this step may take must fit the counter
    Pcg32 rng = rng_;  // committed only when the step succeeds
    PipelineInput input{logits, params_, prompt_, output_};
    input.mirostat_mu = mirostat_mu_;
    input.logprob_memo = memo;
    // Ids outside this row's V: the full count names the first one.
    const bool counted = min_id_ >= 0 && max_id_ < static_cast<std::int64_t>(logits.size());
    PipelineTrace trace = run_pipeline(pipeline_, input, rng, seed_, draws_, counted ? &history_ : nullptr);
    rng_ = rng;
    if (trace.mirostat) mirostat_mu_ = trace.mirostat->mu_after;
    draws_ = trace.trace.draws_consumed;
    output_.push_back(trace.trace.token);
    add_to_history(history_, trace.trace.token);
    max_id_ = std::max<std::int64_t>(max_id_, trace.trace.token);
    return trace;
}

void Request::reset() {
    rng_ = stream(seed_, kSampleLabel);
    draws_ = 0;
    output_ = initial_output_;
    history_ = initial_history_;
    min_id_ = initial_min_id_;
    max_id_ = initial_max_id_;
    mirostat_mu_.reset();
}

}  // namespace samplescope
