// samplescope-cli beam: beam search on a model (engine/generation/beam.h),
// every step's candidates, kept beams and finished hypotheses as JSON.
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/model_options.h"
#include "app/request_options.h"
#include "engine/base/input_error.h"
#include "engine/base/memory_budget.h"
#include "engine/base/number_text.h"
#include "engine/generation/beam.h"
#include "engine/json/beam_json.h"
#include "engine/json/generation_json.h"
#include "engine/json/json_stream.h"

namespace samplescope::cli {

Command add_beam_command(CLI::App& app) {
    auto* command = app.add_subcommand(
        "beam", "Beam search with a model (--model ngram: Debian's English trigram model), as HF transformers or "
                "vLLM run it; prints every step's candidates, kept beams and finished hypotheses as JSON");
    auto options = std::make_shared<RequestOptions>();
    auto model_options = std::make_shared<ModelOptions>();
    auto width_text = std::make_shared<std::string>();
    auto steps_text = std::make_shared<std::string>();
    auto length_penalty_text = std::make_shared<std::string>();
    auto early_stopping_text = std::make_shared<std::string>();
    auto rules_text = std::make_shared<std::string>("hf");
    auto repetition_text = std::make_shared<std::string>();
    auto ignore_eos = std::make_shared<bool>(false);
    add_model_options(*command, *model_options);
    add_model_file_options(*command, *options);
    command->add_option("--width", *width_text, "Beams kept per step, 1 to 64 (default 4)")->check(non_empty_value());
    command->add_option("--steps", *steps_text, "New tokens at most, 1 to 1000 (default 10)")->check(non_empty_value());
    command->add_option("--length-penalty", *length_penalty_text,
                        "alpha in score = logprob / length^alpha for finished hypotheses (default 1)")
        ->check(non_empty_value());
    command->add_option("--early-stopping", *early_stopping_text,
                        "HF's early_stopping: false (default), true or never")
        ->check(non_empty_value());
    command->add_option("--beam-rules", *rules_text,
                        "Whose beam search: hf (transformers _beam_search, default) or vllm (LLM.beam_search)")
        ->check(non_empty_value());
    command->add_option("--repetition-penalty", *repetition_text,
                        "HF's repetition penalty on the log-probabilities (hf rules only; default 1, off)")
        ->check(non_empty_value());
    command->add_flag("--ignore-eos", *ignore_eos, "The end of text (</s>) continues like any token");
    command->footer(
        "JSON: model, prompt, beam_rules (each aspect with its source), width, step_limit, length_penalty, "
        "early_stopping, steps (per step: the beams extended, the candidates with the beam each extends, the "
        "token's score, the summed and the length-penalised score, rank, whether it ends a hypothesis and its "
        "fate: kept, finished, not_finished or pruned; the kept beams; the finished hypotheses; stop_reason), "
        "then result (the hypotheses, best first) and text. Beam search draws nothing: no seed.");

    return {command, [=]() {
        BeamOptions beam;
        beam.rules = parse_beam_rules(*rules_text, "beam-rules");
        if (!width_text->empty()) {
            beam.width = static_cast<std::size_t>(
                parse_int_in_range(*width_text, "width", "--width", 1, static_cast<std::int64_t>(kMaxBeamWidth)));
        }
        if (!steps_text->empty()) {
            beam.steps = static_cast<std::size_t>(
                parse_int_in_range(*steps_text, "steps", "--steps", 1, static_cast<std::int64_t>(kMaxBeamSteps)));
        }
        if (!length_penalty_text->empty()) beam.length_penalty = parse_length_penalty(*length_penalty_text);
        if (!early_stopping_text->empty()) {
            beam.early_stopping = parse_early_stopping(*early_stopping_text, "early-stopping");
            if (beam.rules == BeamRules::Vllm) {
                throw InputError("early_stopping", "--early-stopping " + *early_stopping_text +
                                                       ": vLLM's beam search has no early stopping (it runs every "
                                                       "step); give --beam-rules hf");
            }
        }
        beam.ignore_eos = *ignore_eos;
        const std::uint64_t budget = parse_memory_budget(options->max_memory);
        ModelInput model_input = resolve_model(*model_options, *options, budget);
        const auto model = model_input.model;
        if (!repetition_text->empty()) {
            RequestOptions penalty;
            penalty.param_text["repetition_penalty"] = *repetition_text;
            ResolvedRequest resolved;
            resolve_param_flags(penalty, model->vocab_size(), resolved);
            validate(resolved.params);
            beam.repetition_penalty = resolved.params.repetition_penalty;
        }
        // Each beam's row and scores, and the candidates: a few rows of V at once.
        check_memory(trace_memory_estimate(model->vocab_size(), 1, false, false), budget,
                     "a beam step at V = " + std::to_string(model->vocab_size()));
        BeamSearch search(model, std::move(model_input.prompt), beam);

        std::optional<nlohmann::ordered_json> first = beam_step_to_json(search.step(), *model);
        const std::vector<LateMember> members{
            {"model", [&](std::ostream& out, std::size_t at) { write_json(out, model->description(), at); }},
            {"model_kind", [&](std::ostream& out, std::size_t at) { write_json(out, std::string(model->kind()), at); }},
            {"prompt", [&](std::ostream& out, std::size_t at) { write_json(out, prompt_to_json(search.prompt()), at); }},
            {"beam_rules", [&](std::ostream& out, std::size_t at) {
                 nlohmann::ordered_json rules;
                 rules["name"] = beam_rules_name(beam.rules);
                 rules["rules"] = beam_rules_to_json(beam.rules);
                 write_json(out, rules, at);
             }},
            {"width", [&](std::ostream& out, std::size_t at) { write_json(out, beam.width, at); }},
            {"step_limit", [&](std::ostream& out, std::size_t at) { write_json(out, beam.steps, at); }},
            {"length_penalty", [&](std::ostream& out, std::size_t at) { write_json(out, beam.length_penalty, at); }},
            {"early_stopping", [&](std::ostream& out, std::size_t at) {
                 write_json(out, beam.rules == BeamRules::Hf ? nlohmann::ordered_json(early_stopping_name(beam.early_stopping))
                                                             : nlohmann::ordered_json(nullptr),
                            at);
             }},
            {"steps", [&](std::ostream& out, std::size_t at) {
                 write_json_array_until(
                     out,
                     [&](std::size_t i) -> std::optional<nlohmann::ordered_json> {
                         if (i == 0) return std::move(first);
                         if (search.done()) return std::nullopt;
                         return beam_step_to_json(search.step(), *model);
                     },
                     at, 1);
             }},
            {"result", [&](std::ostream& out, std::size_t at) {
                 write_json(out, beam_hypotheses_to_json(search.result(), *model), at);
             }},
            {"text", [&](std::ostream& out, std::size_t at) {
                 const auto result = search.result();
                 std::vector<std::string> texts;
                 for (const auto& word : search.prompt()) texts.push_back(word.text);
                 if (!result.empty()) {
                     for (const auto id : result.front().tokens) texts.push_back(model->token_text(id));
                 }
                 write_json(out, join_token_texts(texts), at);
             }},
        };
        write_json_members(std::cout, members);
        std::cout << "\n";
        for (const auto& warning : model_input.warnings) std::cerr << "samplescope-cli: warning: " << warning << "\n";
        return 0;
    }};
}

}  // namespace samplescope::cli
