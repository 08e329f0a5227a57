// `samplescope-cli explain`: a server's response with logprobs, token by
// token, against the request's sampling parameters (engine/responses/;
// docs/responses.md). Exit 0 when no token is excluded, 1 when some are, 2 on bad input.
#include <iostream>
#include <limits>
#include <memory>

#include "app/cli/commands.h"
#include "app/request_options.h"
#include "engine/base/input_error.h"
#include "engine/base/memory_budget.h"
#include "engine/base/number_text.h"
#include "engine/io/samples_reader.h"
#include "engine/io/vocabulary.h"
#include "engine/json/response_json.h"
#include "engine/responses/explain_setup.h"
#include "engine/responses/response_loader.h"

namespace samplescope::cli {

namespace {

struct ExplainFlags {
    std::string response_file;
    std::string request_file;
    std::string pipeline;
    std::string stages;
    std::string logprobs_mode;
    std::string vocab_file;
    std::string vocab_size;
    std::string choice;
    std::string tensor;
    std::string generated_ids;
    std::string max_memory;
    bool summary = false;
};

// "1,2,3" typed, or a file of ids (.npy int32/int64, or text).
std::vector<std::int64_t> read_ids(const std::string& text) {
    if (text.find_first_not_of("0123456789, \t-") == std::string::npos) {
        std::vector<std::int64_t> ids;
        for (const auto& item : parse_value_list(text)) {
            if (!(item >= 0 && item <= 9.0e15 && item == static_cast<double>(static_cast<std::int64_t>(item)))) {
                throw InputError("generated_ids", "--generated-ids must hold integer ids >= 0, got " + format_number(item));
            }
            ids.push_back(static_cast<std::int64_t>(item));
        }
        return ids;
    }
    const SampleRows rows = load_samples_file(text);
    if (rows.rows.size() != 1) {
        throw InputError("generated_ids", text + ": holds " + std::to_string(rows.rows.size()) +
                                              " rows of ids; the generated ids are one row");
    }
    return rows.rows.front();
}

}  // namespace

Command add_explain_command(CLI::App& app) {
    auto* command = app.add_subcommand(
        "explain", "Explain every token of a server's response with logprobs against the request's sampling "
                   "parameters: rank, logprob, alternatives, entropy bounds and, per step, kept, cut or cannot tell "
                   "(exit 0 none excluded, 1 some excluded, 2 bad input)");
    auto flags = std::make_shared<ExplainFlags>();
    auto params = std::make_shared<RequestOptions>();
    command->add_option("--response", flags->response_file,
                        "The response: an OpenAI chat or completions answer (whole, or streamed data: lines), a "
                        "llama.cpp /completion answer, a vLLM RequestOutput dump (.json), HF generate() scores or "
                        "logits (.npy, .safetensors [T, V]), or {\"request\": ..., \"response\": ...}")
        ->required();
    command->add_option("--request", flags->request_file,
                        "The request body (JSON) whose sampling parameters to check against; the response file's "
                        "own request or generation_settings are read when present");
    add_param_options(*command, *params);
    std::string names;
    for (const auto& preset : kPresets) names += std::string(preset.name) + ", ";
    command->add_option("--pipeline", flags->pipeline,
                        "The engine's pipeline: " + names + "custom (default: by the response's format; llama.cpp "
                        "-> llamacpp, HF -> hf, OpenAI and vLLM -> vllm)");
    command->add_option("--stages", flags->stages, "Steps of a custom pipeline, as for `trace --stages`");
    std::string modes;
    for (const auto& info : kLogprobModes) modes += (modes.empty() ? "" : ", ") + std::string(info.mode);
    command->add_option("--logprobs-mode", flags->logprobs_mode,
                        "What the response's numbers are: " + modes +
                            " (default: what the response says, else the pipeline's default mode)");
    command->add_option("--vocab", flags->vocab_file,
                        "A tokenizer.json, vocab.json, vocab.txt or .gguf: labels for ids without text, and V");
    command->add_option("--vocab-size", flags->vocab_size,
                        "V, the vocabulary's size: bounds the ids outside the list (ranks, entropy, T > 1) and checks ids")
        ->check(non_empty_value());
    command->add_option("--choice", flags->choice, "Which choice (OpenAI n > 1) or output (vLLM) to explain (default 0)")
        ->check(non_empty_value());
    command->add_option("--tensor", flags->tensor, "HF .safetensors: the [T, V] tensor (default: scores or logits)");
    command->add_option("--generated-ids", flags->generated_ids,
                        "HF: the generated ids, \"1,2,3\" or a file (.npy or text); default: the file's output_ids");
    command->add_option("--max-memory", flags->max_memory, "Memory the run may use, e.g. 4G (default: half of memory)")
        ->check(non_empty_value());
    command->add_flag("--summary", flags->summary, "Print only the one-line summary instead of the JSON");
    command->footer("JSON: source, format, pipeline, logprobs_mode, params, param_sources, notes, tokens (position, "
                    "token, id, value, rank, rank_max, alternatives, top, rest_mass, entropy, verdict, stages (stage, "
                    "verdict, parameter, quantity, lo, hi, reason), summary), summary (checked, possible, excluded, "
                    "cannot_tell, line). docs/responses.md explains each.");

    return {command, [flags, params]() {
        ResponseLoadOptions load;
        load.memory_limit_bytes = parse_memory_budget(flags->max_memory);
        load.logprobs_mode = flags->logprobs_mode;
        load.tensor = flags->tensor;
        if (!flags->choice.empty()) {
            load.choice = static_cast<std::size_t>(
                parse_uint_in_range(flags->choice, "choice", "--choice", 0, std::numeric_limits<std::uint32_t>::max()));
        }
        if (!flags->generated_ids.empty()) load.generated_ids = read_ids(flags->generated_ids);
        ExplainRequest request;
        request.pipeline = flags->pipeline;
        request.stages = flags->stages;
        request.logprobs_mode = flags->logprobs_mode;
        request.flags = given_params(*params);
        if (!flags->vocab_size.empty()) {
            request.vocab_size = static_cast<std::size_t>(
                parse_uint_in_range(flags->vocab_size, "vocab_size", "--vocab-size", 1, std::numeric_limits<std::int32_t>::max()));
        }
        if (!flags->request_file.empty()) request.request = load_request_settings_file(flags->request_file);
        std::optional<Vocabulary> vocabulary;
        if (!flags->vocab_file.empty()) vocabulary = load_vocabulary(flags->vocab_file);
        Response response = load_response_file(flags->response_file, load);
        if (vocabulary) {
            // A full row's width is V itself; a vocabulary gives V to a top-N response.
            if (!request.vocab_size && !response.rows) request.vocab_size = vocabulary->size();
            label_response(response, *vocabulary);
        }
        if (request.vocab_size) response_detail::check_ids(response, *request.vocab_size);
        const ExplainSetup setup = resolve_explain(response, request);
        const ResponseExplanation explanation = explain_response(response, setup.settings);
        if (flags->summary) {
            std::cout << explanation.summary_line() << "\n";
        } else {
            write_explanation_json(std::cout, response, setup, explanation);
        }
        return explanation.excluded > 0 ? 1 : 0;
    }};
}

}  // namespace samplescope::cli
