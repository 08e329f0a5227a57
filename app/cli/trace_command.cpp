#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/pipeline_options.h"
#include "app/request_options.h"
#include "engine/base/input_error.h"
#include "engine/base/memory_budget.h"
#include "engine/base/number_text.h"
#include "engine/pipelines/request.h"
#include "engine/json/json_stream.h"
#include "engine/json/pipeline_json.h"
#include "engine/json/trace_json.h"
#include "engine/json/trace_labels.h"

namespace samplescope::cli {

Command add_trace_command(CLI::App& app) {
    auto* command = app.add_subcommand("trace", "Sample one row and print every stage of the pipeline as JSON");
    auto options = std::make_shared<RequestOptions>();
    auto steps_text = std::make_shared<std::string>();
    auto full = std::make_shared<bool>(false);
    auto pipeline_options = std::make_shared<PipelineOptions>();
    auto engine_defaults = std::make_shared<bool>(false);
    add_request_options(*command, *options);
    add_pipeline_options(*command, *pipeline_options);
    command->add_flag("--engine-defaults", *engine_defaults,
                      "Start from the pipeline's own parameter defaults (flags given still win)");
    command->add_option("--steps", *steps_text,
                        "Sample N tokens as one request, appending each to the output ids; prints a JSON array "
                        "of N traces when N > 1 (1 to 100000, default 1)")
        ->check(non_empty_value());
    command->add_flag("--full", *full, "Also print every stage's logits and probabilities (large at real V)");
    command->footer(
        "JSON: token, logprob, u (null when greedy), seed (decimal string), draws_consumed, params (those away from "
        "their default, and the seed), kept (final ids, ascending), probs, cumulative, stages (name, active, "
        "kept_count; kept for the truncation stages) and ignored_params (set, but read by no step). "
        "With --vocab or a labelled logits file: token_text and kept_text (labels aligned with kept).");

    return {command, [options, steps_text, full, pipeline_options, engine_defaults]() {
        ResolvedRequest input = resolve_request(*options);
        const std::int64_t steps =
            steps_text->empty() ? 1 : parse_int_in_range(*steps_text, "steps", "--steps", 1, 100000);
        check_draw_counter(input.skip_draws, static_cast<std::uint64_t>(steps), "skip_draws");
        const Pipeline pipeline = resolve_pipeline(*pipeline_options);
        // Every pipeline's trace streams its steps.
        check_memory(trace_memory_estimate(input.logits.size(), static_cast<std::uint64_t>(steps), *full, false),
                     input.memory_budget,
                     std::to_string(steps) + " step(s) of a trace of V = " + std::to_string(input.logits.size()));
        if (*engine_defaults) apply_engine_defaults(*options, pipeline, input);
        // One request for every pipeline; `spec` prints as the contract's trace,
        // the others with their rules, flags and ignored parameters.
        Request request(pipeline, input.params, input.prompt_ids, input.output_ids);
        request.skip_draws(input.skip_draws);
        if (input.mirostat_mu) request.set_mirostat_mu(*input.mirostat_mu);
        TraceJsonOptions json_options{*full};
        // The trace is written one stage at a time (engine/json/json_stream.h):
        // the rest of its JSON is built first, with "stages" left an empty
        // placeholder in its place, and each stage's object is built only as
        // it is written, so a --full trace holds one stage's JSON, not all.
        json_options.stages = false;
        // Warnings go out only once the output has succeeded, so an error stays one line.
        const auto warn = [&input]() {
            for (const auto& warning : input.warnings) std::cerr << "samplescope-cli: warning: " << warning << "\n";
        };
        const auto write_trace = [&](std::size_t indent) {
            const PipelineTrace trace = request.step_pipeline(input.logits);
            auto json = pipeline.reference ? trace_to_json(trace.trace, json_options)
                                           : pipeline_trace_to_json(trace, json_options);
            add_token_text(json, trace.trace, input.labels);
            StreamedArray stages{"stages", trace.trace.stages.size(), [&](std::size_t i) {
                                     return pipeline.reference ? trace_stage_to_json(trace.trace, i, json_options)
                                                               : pipeline_stage_to_json(trace, i, json_options);
                                 }};
            // A stage's members one at a time too: its largest text is one array's.
            stages.split_levels = 1;
            write_json_streamed(std::cout, json, stages, indent);
        };
        if (steps == 1) {
            write_trace(0);
        } else {
            // The --steps array one trace at a time, each stepped only once the one before is written.
            write_json_array(std::cout, static_cast<std::size_t>(steps),
                             [&](std::size_t, std::size_t indent) { write_trace(indent); });
        }
        std::cout << "\n";
        warn();
        return 0;
    }};
}

}  // namespace samplescope::cli
