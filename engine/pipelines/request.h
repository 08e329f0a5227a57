// A multi-token request through one pipeline (the contract's `spec` unless
// another is given): it owns the seed's stream and the history, so each
// step's penalties see the tokens drawn before it and the stream advances by
// the contract's draw accounting (one uniform per sampled token, none when greedy).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "engine/core/generator.h"
#include "engine/core/token_history.h"
#include "engine/stages/pipeline.h"

namespace samplescope {

class Request {
public:
    // Uses params.seed, or chooses one. Throws InputError for bad parameters
    // or a bad pipeline. Without a pipeline, the contract's.
    explicit Request(SamplingParams params, std::vector<std::int64_t> prompt_ids = {},
                     std::vector<std::int64_t> output_ids = {});
    Request(Pipeline pipeline, SamplingParams params, std::vector<std::int64_t> prompt_ids = {},
            std::vector<std::int64_t> output_ids = {});

    // Discards n uniforms, as a decode worker does after a prefill worker drew n.
    void skip_draws(std::uint64_t n);

    // Samples from these logits, appends the token to the output ids, advances
    // the stream. Throws InputError (and changes nothing) on bad input.
    // `memo`: the caller's logprob memo, kept between its steps (pipeline.h).
    PipelineTrace step_pipeline(std::span<const double> logits, LogprobMemo* memo = nullptr);
    SampleTrace step(std::span<const double> logits, LogprobMemo* memo = nullptr) {
        return step_pipeline(logits, memo).trace;
    }

    // Back to the first draw of the seed's stream, the original history and
    // mirostat's starting mu.
    void reset();

    // Mirostat's state: 2 tau until a mirostat step has run, then the mu the
    // last step left (PipelineTrace::mirostat).
    double mirostat_mu() const { return mirostat_mu_.value_or(2.0 * params_.mirostat_tau); }
    // Continues from a given state (a step's mu_after); reset() still goes back to 2 tau.
    void set_mirostat_mu(double mu) { mirostat_mu_ = mu; }

    std::uint64_t seed() const { return seed_; }
    std::uint64_t draws_consumed() const { return draws_; }
    const SamplingParams& params() const { return params_; }
    void set_params(const SamplingParams& params);  // keeps the seed, the stream and the history
    const Pipeline& pipeline() const { return pipeline_; }
    const std::vector<std::int64_t>& prompt_ids() const { return prompt_; }
    const std::vector<std::int64_t>& output_ids() const { return output_; }

private:
    Pipeline pipeline_;
    SamplingParams params_;
    std::uint64_t seed_;
    std::vector<std::int64_t> prompt_;
    std::vector<std::int64_t> output_;
    std::vector<std::int64_t> initial_output_;
    Pcg32 rng_;
    std::uint64_t draws_ = 0;
    std::optional<double> mirostat_mu_;
    // The history's counts, kept up to date token by token (so a long request
    // costs the same per step, not a recount of its whole history), with the
    // id range they hold for the check against each step's V.
    HistoryCounts history_;
    HistoryCounts initial_history_;
    std::int64_t min_id_ = 0;
    std::int64_t max_id_ = -1;
    std::int64_t initial_min_id_ = 0;
    std::int64_t initial_max_id_ = -1;
};

}  // namespace samplescope
