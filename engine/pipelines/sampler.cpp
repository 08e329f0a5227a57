#include "engine/pipelines/sampler.h"

#include "engine/pipelines/pipeline_presets.h"
#include "engine/pipelines/pipeline_runner.h"

namespace samplescope {

namespace {

const Pipeline& contract_pipeline() {
    static const Pipeline spec = preset_pipeline("spec");
    return spec;
}

}  // namespace

SampleTrace trace_step(const StepInput& input, Pcg32& rng, std::uint64_t seed, std::uint64_t draws_before) {
    const PipelineInput row{input.logits, input.params, {}, {}};
    return run_pipeline(contract_pipeline(), row, rng, seed, draws_before, &input.history).trace;
}

SampleResult sample_step(const StepInput& input, Pcg32& rng) {
    const PipelineInput row{input.logits, input.params, {}, {}};
    return sample_pipeline(contract_pipeline(), row, rng, &input.history);
}

SampleTrace trace_once(std::span<const double> logits, const SamplingParams& params,
                       std::span<const std::int64_t> prompt_ids, std::span<const std::int64_t> output_ids,
                       std::uint64_t skip_draws) {
    return trace_pipeline_once(contract_pipeline(), PipelineInput{logits, params, prompt_ids, output_ids}, skip_draws)
        .trace;
}

}  // namespace samplescope
