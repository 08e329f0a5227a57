// The model flags of the commands that generate (generate, speculate, beam):
// --model KIND, --model-path FILE and --prompt TEXT, with the request flags'
// --logits / --vocab / --tensor / --row naming a rows model's file and
// --prompt-ids a prompt given as ids.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/request_options.h"
#include "engine/models/language_model.h"

namespace samplescope::cli {

struct ModelOptions {
    std::string model = "ngram";
    std::string model_path;
    std::string prompt;
    std::string prompt_file;
};

void add_model_options(CLI::App& app, ModelOptions& options);

// For a command without the sampling flags (beam): --logits, --vocab,
// --tensor and --row naming a rows model's file, --prompt-ids and --max-memory.
void add_model_file_options(CLI::App& app, RequestOptions& options);

struct ModelInput {
    std::shared_ptr<const LanguageModel> model;
    std::vector<PromptWord> prompt;
    std::vector<std::string> warnings;
};

// Loads the model and reads the prompt; throws InputError for a flag that
// does not fit the model (--values, --logits without --model rows, both
// --prompt and --prompt-ids, no prompt for an n-gram model).
ModelInput resolve_model(const ModelOptions& options, const RequestOptions& request, std::uint64_t memory_budget);

// Loads a model named by a kind and a path as --model and --model-path would
// ("rows" takes the request's --logits); `flag` names the kind's flag in errors.
std::shared_ptr<const LanguageModel> load_named_model(const std::string& kind, const std::string& path,
                                                      const RequestOptions& request, std::uint64_t memory_budget,
                                                      const std::string& flag, std::vector<std::string>& warnings);

}  // namespace samplescope::cli
