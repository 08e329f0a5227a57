// Runs a pipeline (engine/stages/pipeline.h) on one row: the steps in the
// pipeline's own order, each by its stage unit (engine/stages/stage_unit.h),
// then the contract's draw. Every pipeline, `spec` included, runs here.
#pragma once

#include <cstdint>

#include "engine/core/generator.h"
#include "engine/core/token_history.h"
#include "engine/stages/pipeline.h"

namespace samplescope {

// One step, drawing from `rng` (advanced by the draws taken). `seed` and
// `draws_before` are recorded only. `history`, when given, is the input's
// history already counted. Throws InputError for a bad row, parameter,
// history id or pipeline.
PipelineTrace run_pipeline(const Pipeline& pipeline, const PipelineInput& input, Pcg32& rng, std::uint64_t seed,
                           std::uint64_t draws_before, const HistoryCounts* history = nullptr);

// The same without a trace: only the work the token and its logprob need.
SampleResult sample_pipeline(const Pipeline& pipeline, const PipelineInput& input, Pcg32& rng,
                             const HistoryCounts* history = nullptr);

// The distribution one step of `pipeline` draws from, without drawing: the
// final kept set and q, or with an XTC coin that could change the kept set
// the mixture of its two outcomes (equal to PipelineTrace::exact_ids and
// exact_probs of the traced step, bit for bit). `greedy`: the step takes no
// uniform (ids is then the greedy token alone). The lean path: no trace, no
// float32 rerun. Throws InputError as run_pipeline does.
struct ExactDistribution {
    IdList ids;    // ascending
    Values probs;  // aligned with ids
    bool greedy = false;
};
ExactDistribution exact_distribution(const Pipeline& pipeline, const PipelineInput& input,
                                     const HistoryCounts* history = nullptr);

// One step of a fresh request: the seed from the params (chosen when absent),
// `skip_draws` uniforms discarded first.
PipelineTrace trace_pipeline_once(const Pipeline& pipeline, const PipelineInput& input, std::uint64_t skip_draws = 0);

}  // namespace samplescope
