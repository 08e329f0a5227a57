// samplescope-cli generate: text written token by token by a model
// (engine/generation/generation.h), each token's row sampled through the
// pipeline, printed as it is sampled.
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/model_options.h"
#include "app/cli/pipeline_options.h"
#include "app/request_options.h"
#include "engine/base/input_error.h"
#include "engine/base/memory_budget.h"
#include "engine/base/number_text.h"
#include "engine/core/token_history.h"
#include "engine/generation/generation.h"
#include "engine/json/generation_json.h"
#include "engine/json/json_stream.h"

namespace samplescope::cli {

Command add_generate_command(CLI::App& app) {
    auto* command = app.add_subcommand(
        "generate", "Write text token by token with a model (--model ngram: Debian's English trigram model), each "
                    "token sampled through the pipeline; prints JSON per token and the text");
    auto options = std::make_shared<RequestOptions>();
    auto model_options = std::make_shared<ModelOptions>();
    auto pipeline_options = std::make_shared<PipelineOptions>();
    auto steps_text = std::make_shared<std::string>();
    auto full = std::make_shared<bool>(false);
    auto ignore_eos = std::make_shared<bool>(false);
    add_model_options(*command, *model_options);
    add_request_options(*command, *options);
    add_pipeline_options(*command, *pipeline_options);
    command->add_option("--steps", *steps_text, "Tokens to generate, 1 to 100000 (default 20)")
        ->check(non_empty_value());
    command->add_flag("--full", *full, "Print each token's whole trace, as `trace` prints it");
    command->add_flag("--ignore-eos", *ignore_eos,
                      "Go on past the model's end of text (</s>): the n-gram model starts a new sentence");
    command->footer(
        "JSON: model, prompt (each word with its id, null when outside the vocabulary), pipeline, seed, tokens "
        "(per token: step, token, text, logprob, u, greedy, probability and rank in the final distribution, "
        "kept_count, draws_consumed, and each stage's counts and thresholds), then text, generated_text, "
        "tokens_generated, ended and draws_consumed. --model rows replays --logits FILE, row t at step t.");

    return {command, [=]() {
        const std::int64_t steps =
            steps_text->empty() ? 20 : parse_int_in_range(*steps_text, "steps", "--steps", 1, 100000);
        ResolvedRequest input;
        input.memory_budget = parse_memory_budget(options->max_memory);
        ModelInput model_input = resolve_model(*model_options, *options, input.memory_budget);
        const auto& model = *model_input.model;
        if (const auto rows = model.max_generated(); rows && static_cast<std::uint64_t>(steps) > *rows) {
            throw InputError("steps", "--steps " + std::to_string(steps) + ": " + model.description() +
                                          " holds only " + std::to_string(*rows) + " rows, one per step");
        }
        resolve_param_flags(*options, model.vocab_size(), input);
        const Pipeline pipeline = resolve_pipeline(*pipeline_options);
        GenerationState state;
        if (!options->output_ids.empty()) state.generated = parse_id_list(options->output_ids, "output_ids");
        if (!options->skip_draws.empty()) {
            state.draws = parse_uint_in_range(options->skip_draws, "skip_draws", "--skip-draws", 0,
                                              std::numeric_limits<std::uint64_t>::max());
        }
        check_draw_counter(state.draws, static_cast<std::uint64_t>(steps), "skip_draws");
        state.mirostat_mu = input.mirostat_mu;
        GenerationOptions generation_options;
        generation_options.stop_at_end = !*ignore_eos;
        Generation generation(model_input.model, pipeline, input.params, std::move(model_input.prompt),
                              generation_options, std::move(state));
        // One token's JSON at a time; a full trace is row-sized.
        check_memory(trace_memory_estimate(model.vocab_size(), 1, *full, false), input.memory_budget,
                     "a generation's step at V = " + std::to_string(model.vocab_size()));

        const auto& labels = model.labels();
        // The first token is sampled before anything is printed: a refusal
        // (a row every stage empties, a ban on every id) stays one line.
        std::optional<nlohmann::ordered_json> first =
            generation_step_to_json(generation.step(), 0, pipeline, labels, *full);
        std::size_t made = 1;
        const std::vector<LateMember> members{
            {"model", [&](std::ostream& out, std::size_t at) { write_json(out, model.description(), at); }},
            {"model_kind", [&](std::ostream& out, std::size_t at) { write_json(out, std::string(model.kind()), at); }},
            {"prompt", [&](std::ostream& out, std::size_t at) { write_json(out, prompt_to_json(generation.prompt()), at); }},
            {"pipeline", [&](std::ostream& out, std::size_t at) { write_json(out, pipeline.name, at); }},
            {"seed", [&](std::ostream& out, std::size_t at) {
                 write_json(out, std::to_string(generation.request().seed()), at);
             }},
            {"tokens", [&](std::ostream& out, std::size_t at) {
                 write_json_array_until(
                     out,
                     [&](std::size_t i) -> std::optional<nlohmann::ordered_json> {
                         if (i == 0) return std::move(first);
                         if (i == static_cast<std::size_t>(steps) || generation.ended()) return std::nullopt;
                         const GenerationStep step = generation.step();
                         made = i + 1;
                         return generation_step_to_json(step, i, pipeline, labels, *full);
                     },
                     at, 1);
             }},
            {"text", [&](std::ostream& out, std::size_t at) { write_json(out, generation.text(), at); }},
            {"generated_text", [&](std::ostream& out, std::size_t at) {
                 write_json(out, generation.generated_text(), at);
             }},
            {"tokens_generated", [&](std::ostream& out, std::size_t at) { write_json(out, made, at); }},
            {"ended", [&](std::ostream& out, std::size_t at) { write_json(out, generation.ended(), at); }},
            {"draws_consumed", [&](std::ostream& out, std::size_t at) {
                 write_json(out, generation.request().draws_consumed(), at);
             }},
        };
        write_json_members(std::cout, members);
        std::cout << "\n";
        for (const auto& warning : model_input.warnings) std::cerr << "samplescope-cli: warning: " << warning << "\n";
        return 0;
    }};
}

}  // namespace samplescope::cli
