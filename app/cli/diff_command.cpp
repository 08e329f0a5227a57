#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/pipeline_options.h"
#include "app/request_options.h"
#include "engine/pipelines/pipeline_diff.h"
#include "engine/json/pipeline_json.h"

namespace samplescope::cli {

Command add_diff_command(CLI::App& app) {
    auto* command = app.add_subcommand(
        "diff", "Run two pipelines on the same row, parameters and seed; print where they part as JSON");
    auto options = std::make_shared<RequestOptions>();
    auto pipeline_a = std::make_shared<PipelineOptions>();
    auto pipeline_b = std::make_shared<PipelineOptions>();
    add_request_options(*command, *options);
    add_pipeline_options(*command, *pipeline_a, "-a");
    add_pipeline_options(*command, *pipeline_b, "-b");
    command->footer(
        "JSON: seed, a and b (pipeline, active_order, kept, probs, token, u, tie_at_boundary, near_boundary, "
        "ignored_params), only_a, only_b, tokens (id, prob_a, prob_b for every id either keeps), "
        "total_variation, same_token. Both pipelines draw from the contract's stream of the same seed.");

    return {command, [options, pipeline_a, pipeline_b]() {
        const ResolvedRequest input = resolve_request(*options);
        const Pipeline a = resolve_pipeline(*pipeline_a);
        const Pipeline b = resolve_pipeline(*pipeline_b);
        const PipelineInput row{input.logits, input.params, input.prompt_ids, input.output_ids};
        const PipelineDiff diff = diff_pipelines(a, b, row, input.skip_draws);
        std::cout << pipeline_diff_to_json(diff, input.labels).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                  << "\n";
        return 0;
    }};
}

}  // namespace samplescope::cli
