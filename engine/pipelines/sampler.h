// The contract's sampler (contract section 2, steps 1 to 11, in f64 with sums in
// ascending id order): the `spec` pipeline run by the one pipeline runner
// (engine/pipelines/pipeline_runner.h), for callers that want the contract
// without naming a pipeline.
#pragma once

#include <cstdint>
#include <span>

#include "engine/core/generator.h"
#include "engine/core/row_checks.h"
#include "engine/core/sampling_params.h"
#include "engine/core/token_history.h"
#include "engine/core/trace.h"

namespace samplescope {

struct StepInput {
    std::span<const double> logits;
    const SamplingParams& params;
    const HistoryCounts& history;  // from count_history(), checked against V
};

// One step, drawing from `rng` (which is advanced by the draws taken). `seed`
// and `draws_before` are only recorded in the trace. Throws InputError.
SampleTrace trace_step(const StepInput& input, Pcg32& rng, std::uint64_t seed, std::uint64_t draws_before);
SampleResult sample_step(const StepInput& input, Pcg32& rng);

// One step of a fresh request: seed from params (chosen when absent), history
// validated, `skip_draws` uniforms discarded first.
SampleTrace trace_once(std::span<const double> logits, const SamplingParams& params,
                       std::span<const std::int64_t> prompt_ids = {}, std::span<const std::int64_t> output_ids = {},
                       std::uint64_t skip_draws = 0);

}  // namespace samplescope
