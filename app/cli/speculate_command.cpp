// samplescope-cli speculate: speculative decoding on two models
// (engine/generation/speculative.h), each round printed as it is verified.
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/model_options.h"
#include "app/cli/pipeline_options.h"
#include "app/request_options.h"
#include "engine/base/input_error.h"
#include "engine/base/memory_budget.h"
#include "engine/base/number_text.h"
#include "engine/generation/speculative.h"
#include "engine/json/generation_json.h"
#include "engine/json/json_stream.h"
#include "engine/json/speculative_json.h"
#include "engine/models/model_source.h"
#include "engine/models/ngram_model.h"

namespace samplescope::cli {

namespace {

struct DraftOptions {
    std::string kind = "ngram:bigram";
    std::string path;
    std::string logits;
};

// The draft named by --draft: an n-gram model of the target's file shares the
// loaded data (NgramModel::restricted); another file or a rows file is loaded.
std::shared_ptr<const LanguageModel> load_draft(const DraftOptions& draft, const ModelOptions& target_options,
                                                const std::shared_ptr<const LanguageModel>& target,
                                                const RequestOptions& request, std::uint64_t memory_budget,
                                                std::vector<std::string>& warnings) {
    const ModelSpec spec = parse_model_spec(draft.kind, "draft");
    RequestOptions files = request;
    if (spec.kind == "rows") {
        if (!draft.path.empty()) {
            throw InputError("draft_path", "--draft-path names an n-gram draft; a rows draft reads --draft-logits FILE");
        }
        if (draft.logits.empty()) {
            throw InputError("draft_logits", "--draft rows needs --draft-logits FILE (the draft's recorded [T, V] logits)");
        }
        files.logits_file = draft.logits;
        return load_named_model("rows", "", files, memory_budget, "draft", warnings);
    }
    if (!draft.logits.empty()) {
        throw InputError("draft_logits", "--draft-logits is a rows draft's file; give --draft rows to replay it");
    }
    const auto* ngram = dynamic_cast<const NgramModel*>(target.get());
    const bool same_file = draft.path.empty() || draft.path == target_options.model_path;
    if (ngram && same_file && target_options.model != "rows") {
        return ngram->restricted(spec.order == 0 ? ngram->file_order() : spec.order);
    }
    files.logits_file.clear();
    return load_named_model(draft.kind, draft.path, files, memory_budget, "draft", warnings);
}

}  // namespace

Command add_speculate_command(CLI::App& app) {
    auto* command = app.add_subcommand(
        "speculate", "Speculative decoding: a draft model (default ngram:bigram) proposes --k tokens, the target "
                     "(--model) accepts each with probability min(1, p/q) and redraws the first rejection from "
                     "max(0, p - q); prints every round as JSON");
    auto options = std::make_shared<RequestOptions>();
    auto model_options = std::make_shared<ModelOptions>();
    auto pipeline_options = std::make_shared<PipelineOptions>();
    auto draft = std::make_shared<DraftOptions>();
    auto k_text = std::make_shared<std::string>();
    auto steps_text = std::make_shared<std::string>();
    auto rules_text = std::make_shared<std::string>("spec");
    auto diff_text = std::make_shared<std::string>();
    auto full = std::make_shared<bool>(false);
    auto ignore_eos = std::make_shared<bool>(false);
    add_model_options(*command, *model_options);
    command->add_option("--draft", draft->kind,
                        "The draft model: ngram:bigram (default), ngram:unigram, ngram:trigram, ngram, or rows "
                        "(--draft-logits FILE)")
        ->check(non_empty_value());
    command->add_option("--draft-path", draft->path,
                        "An n-gram draft's file (default: the target's, whose loaded data the draft shares)")
        ->check(non_empty_value());
    command->add_option("--draft-logits", draft->logits, "A rows draft's recorded [T, V] logits file")
        ->check(non_empty_value());
    add_request_options(*command, *options);
    add_pipeline_options(*command, *pipeline_options);
    command->add_option("--k", *k_text, "Draft tokens per round, 1 to 32 (default 4)")->check(non_empty_value());
    command->add_option("--steps", *steps_text, "Tokens to write, 1 to 100000 (default 20)")->check(non_empty_value());
    command->add_option("--rules", *rules_text,
                        "Whose verification: spec (the contract's, default), vllm (its rejection sampler), "
                        "flashinfer (chain_speculative_sampling); docs/speculative.md")
        ->check(non_empty_value());
    command->add_option("--diff", *diff_text,
                        "Two presets A,B (e.g. vllm,flashinfer): each round is also verified by both on the same "
                        "rows and the k + 1 uniforms after the draft's draws, and where they differ is printed")
        ->check(non_empty_value());
    command->add_flag("--full", *full, "List every id of each residual or bonus distribution (default: the best 10)");
    command->add_flag("--ignore-eos", *ignore_eos,
                      "Go on past the model's end of text (</s>): the n-gram model starts a new sentence");
    command->footer(
        "JSON: model, draft, prompt, pipeline, rules (each with its source), k, seed, rounds (per round: each "
        "position's draft token, draft_u, q, p, acceptance = min(1, p/q), u, tested, accepted and expected = "
        "sum min(p, q); rejected_at; final: the residual's or bonus's kept set, u and token; emitted), then "
        "text, tokens_generated, ended, draws_consumed and acceptance (rate against expected_rate, its standard "
        "error and z). The order in which a round takes its uniforms is docs/contract.md's.");

    return {command, [=]() {
        const std::int64_t k = k_text->empty() ? 4 : parse_int_in_range(*k_text, "k", "--k", 1, kMaxSpeculativeK);
        const std::int64_t steps =
            steps_text->empty() ? 20 : parse_int_in_range(*steps_text, "steps", "--steps", 1, 100000);
        const SpecPreset& preset = spec_preset(*rules_text, "rules");
        std::optional<std::pair<const SpecPreset*, const SpecPreset*>> diff;
        if (!diff_text->empty()) {
            const auto comma = diff_text->find(',');
            if (comma == std::string::npos || diff_text->find(',', comma + 1) != std::string::npos) {
                throw InputError("diff", "--diff must be two presets A,B (spec, vllm, flashinfer), got \"" +
                                             *diff_text + "\"");
            }
            diff.emplace(&spec_preset(diff_text->substr(0, comma), "diff"), &spec_preset(diff_text->substr(comma + 1), "diff"));
        }
        struct Unread {
            const char* field;
            const char* flag;
            const std::string& text;
        };
        for (const Unread& unread : {Unread{"output_ids", "--output-ids", options->output_ids},
                                     Unread{"skip_draws", "--skip-draws", options->skip_draws},
                                     Unread{"mirostat_mu", "--mirostat-mu", options->mirostat_mu}}) {
            if (!unread.text.empty()) {
                throw InputError(unread.field, std::string(unread.flag) + ": speculate starts a request at its "
                                                   "prompt and first draw; give --prompt and --seed");
            }
        }
        ResolvedRequest input;
        input.memory_budget = parse_memory_budget(options->max_memory);
        ModelInput model_input = resolve_model(*model_options, *options, input.memory_budget);
        const auto target = model_input.model;
        const auto draft_model =
            load_draft(*draft, *model_options, target, *options, input.memory_budget, model_input.warnings);
        check_same_vocabulary(*target, *draft_model);
        for (const auto& [model, flag] : {std::pair{target, "--model"}, std::pair{draft_model, "--draft"}}) {
            if (const auto rows = model->max_generated(); rows && static_cast<std::uint64_t>(steps) > *rows) {
                throw InputError("steps", "--steps " + std::to_string(steps) + ": " + model->description() + " (" +
                                              flag + ") holds only " + std::to_string(*rows) + " rows, one per step");
            }
        }
        resolve_param_flags(*options, target->vocab_size(), input);
        const Pipeline pipeline = resolve_pipeline(*pipeline_options);
        // A round holds 2k + 1 distributions of V ids.
        check_memory(trace_memory_estimate(target->vocab_size(), static_cast<std::uint64_t>(2 * k + 1), false, false),
                     input.memory_budget, "a speculative round at V = " + std::to_string(target->vocab_size()));
        SpeculativeOptions spec_options;
        spec_options.k = static_cast<std::size_t>(k);
        spec_options.preset = &preset;
        spec_options.stop_at_end = !*ignore_eos;
        spec_options.max_tokens = static_cast<std::uint64_t>(steps);
        Speculation speculation(target, draft_model, pipeline, input.params, std::move(model_input.prompt),
                                spec_options);
        const std::size_t kept_shown = *full ? 0 : 10;

        std::uint64_t rounds_compared = 0;
        std::uint64_t rounds_differing = 0;
        const auto round_json = [&](const SpeculativeRound& round) {
            auto json = speculative_round_to_json(round, *target, kept_shown);
            if (diff) {
                // The k + 1 uniforms that follow the draft's draws, as FlashInfer's uniform_samples.
                std::uint64_t draft_draws = 0;
                for (const auto& u : round.draft_u) draft_draws += u ? 1 : 0;
                Pcg32 rng = stream_after(speculation.seed(), round.draws_before + draft_draws);
                std::vector<double> uniforms(round.k + 1);
                for (double& u : uniforms) u = rng.uniform_f64();
                const SpecRoundDiff d = diff_round(*diff->first, *diff->second, round.rows, uniforms);
                ++rounds_compared;
                rounds_differing += d.same_emitted ? 0 : 1;
                json["diff"] = spec_round_diff_to_json(d, *diff->first, *diff->second, uniforms);
            }
            return json;
        };
        // The first round runs before anything is printed: a refusal stays one line.
        std::optional<nlohmann::ordered_json> first = round_json(speculation.round());
        const auto more = [&] { return !speculation.ended() && !speculation.exhausted(); };
        std::vector<LateMember> members{
            {"model", [&](std::ostream& out, std::size_t at) { write_json(out, target->description(), at); }},
            {"draft", [&](std::ostream& out, std::size_t at) { write_json(out, draft_model->description(), at); }},
            {"prompt", [&](std::ostream& out, std::size_t at) { write_json(out, prompt_to_json(speculation.prompt()), at); }},
            {"pipeline", [&](std::ostream& out, std::size_t at) { write_json(out, pipeline.name, at); }},
            {"rules", [&](std::ostream& out, std::size_t at) { write_json(out, spec_preset_to_json(preset), at); }},
            {"k", [&](std::ostream& out, std::size_t at) { write_json(out, k, at); }},
            {"seed", [&](std::ostream& out, std::size_t at) { write_json(out, std::to_string(speculation.seed()), at); }},
            {"rounds", [&](std::ostream& out, std::size_t at) {
                 write_json_array_until(
                     out,
                     [&](std::size_t i) -> std::optional<nlohmann::ordered_json> {
                         if (i == 0) return std::move(first);
                         if (!more()) return std::nullopt;
                         return round_json(speculation.round());
                     },
                     at, 1);
             }},
            {"text", [&](std::ostream& out, std::size_t at) { write_json(out, speculation.text(), at); }},
            {"generated_text", [&](std::ostream& out, std::size_t at) {
                 write_json(out, speculation.generated_text(), at);
             }},
            {"tokens_generated", [&](std::ostream& out, std::size_t at) {
                 write_json(out, speculation.generated().size(), at);
             }},
            {"ended", [&](std::ostream& out, std::size_t at) { write_json(out, speculation.ended(), at); }},
            {"draws_consumed", [&](std::ostream& out, std::size_t at) {
                 write_json(out, speculation.draws_consumed(), at);
             }},
            {"acceptance", [&](std::ostream& out, std::size_t at) {
                 write_json(out, speculative_stats_to_json(speculation.stats()), at);
             }},
        };
        if (diff) {
            members.push_back({"diff_summary", [&](std::ostream& out, std::size_t at) {
                                   nlohmann::ordered_json summary;
                                   summary["a"] = diff->first->name;
                                   summary["b"] = diff->second->name;
                                   summary["rounds"] = rounds_compared;
                                   summary["rounds_emitting_differently"] = rounds_differing;
                                   write_json(out, summary, at);
                               }});
        }
        write_json_members(std::cout, members);
        std::cout << "\n";
        for (const auto& warning : model_input.warnings) std::cerr << "samplescope-cli: warning: " << warning << "\n";
        return 0;
    }};
}

}  // namespace samplescope::cli
