#include <iostream>

#include "app/cli/pipeline_options.h"
#include "engine/json/pipeline_json.h"
#include "engine/pipelines/pipeline_runner.h"

namespace samplescope::cli {

int print_pipeline_trace(const Pipeline& pipeline, const ResolvedRequest& input, std::int64_t steps,
                         const TraceJsonOptions& json_options) {
    const std::uint64_t seed = input.params.seed.value_or(choose_seed());
    Pcg32 rng = stream(seed, kSampleLabel);
    rng.skip_draws(input.skip_draws);
    std::uint64_t draws = input.skip_draws;
    std::vector<std::int64_t> output_ids = input.output_ids;
    auto traces = nlohmann::ordered_json::array();
    for (std::int64_t i = 0; i < steps; ++i) {
        const PipelineInput row{input.logits, input.params, input.prompt_ids, output_ids};
        const PipelineTrace trace = run_pipeline(pipeline, row, rng, seed, draws);
        draws = trace.trace.draws_consumed;
        output_ids.push_back(trace.trace.token);
        traces.push_back(pipeline_trace_to_json(trace, json_options));
    }
    std::cout << (steps == 1 ? traces[0] : traces).dump(2) << "\n";
    return 0;
}

}  // namespace samplescope::cli
