#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/pipeline_options.h"
#include "app/request_options.h"
#include "engine/base/number_text.h"
#include "engine/stats/empirical_sampling.h"
#include "engine/json/pipeline_json.h"
#include "engine/pipelines/pipeline_runner.h"

namespace samplescope::cli {

Command add_histogram_command(CLI::App& app) {
    auto* command = app.add_subcommand(
        "histogram", "Draw N tokens from a pipeline's final distribution with consecutive draws of the request's "
                     "stream; print the counts, the exact q and a chi-square goodness-of-fit test as JSON");
    auto options = std::make_shared<RequestOptions>();
    auto pipeline_options = std::make_shared<PipelineOptions>();
    auto expected_options = std::make_shared<PipelineOptions>();
    auto draws_text = std::make_shared<std::string>();
    auto engine_defaults = std::make_shared<bool>(false);
    add_request_options(*command, *options);
    add_pipeline_options(*command, *pipeline_options);
    command->add_option("--draws", *draws_text, "Number of draws, 1 to 1000000 (default 10000)")
        ->check(non_empty_value());
    command->add_flag("--engine-defaults", *engine_defaults,
                      "Start from the pipeline's own parameter defaults (flags given still win)");
    command->add_option("--expected-from", expected_options->name,
                        "Test the counts against another pipeline's q instead of the drawing pipeline's own");
    command->add_option("--expected-stages", expected_options->stages, "Steps of a custom --expected-from pipeline");
    command->footer(
        "JSON: pipeline, seed, draws, counts (id, count, q, expected_count), chi_square (statistic, "
        "degrees_of_freedom, bins after pooling expected counts below 5, p_value), largest_deviation (id, z in "
        "standard errors).");

    return {command, [options, pipeline_options, expected_options, draws_text, engine_defaults]() {
        ResolvedRequest input = resolve_request(*options);
        const std::uint64_t draws =
            draws_text->empty() ? 10000 : parse_uint_in_range(*draws_text, "draws", "--draws", 1, 1000000);
        check_draw_counter(input.skip_draws, draws, "skip_draws");
        const Pipeline pipeline = resolve_pipeline(*pipeline_options);
        if (*engine_defaults) apply_engine_defaults(*options, pipeline, input);
        PipelineInput row{input.logits, input.params, input.prompt_ids, input.output_ids};
        row.mirostat_mu = input.mirostat_mu;
        EmpiricalResult result = sample_empirically(pipeline, row, draws, input.skip_draws);
        auto json = empirical_to_json(result, input.labels);
        if (!expected_options->name.empty() || !expected_options->stages.empty()) {
            const Pipeline expected = resolve_pipeline(*expected_options);
            PipelineInput seeded = row;
            seeded.params.seed = result.trace.trace.seed;
            const PipelineTrace other = trace_pipeline_once(expected, seeded, input.skip_draws);
            result.test = chi_square_test(result.histogram, other.exact_ids(), other.exact_probs());
            result.deviation =
                largest_deviation(result.histogram, other.exact_ids(), other.exact_probs());
            json = empirical_to_json(result, input.labels);
            json["expected_from"] = other.pipeline;
            json["expected_kept"] = other.exact_ids();
            json["expected_q"] = other.exact_probs();
        }
        std::cout << json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return 0;
    }};
}

}  // namespace samplescope::cli
