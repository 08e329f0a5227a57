// The work of the Generate tab that may take longer than a frame, callable
// from any thread: loading a model (a 27 MB file and its successor index) and
// writing tokens (each a whole pipeline trace at V = 72,547). Neither touches
// a widget; the tab runs them with QtConcurrent and shows a busy state.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <QString>

#include "engine/generation/generation.h"
#include "engine/models/language_model.h"
#include "ui/common/token_labels.h"
#include "ui/generate/generation_tree.h"

namespace samplescope::ui {

struct ModelLoad {
    std::shared_ptr<const LanguageModel> model;  // null when refused
    std::shared_ptr<const TokenLabels> labels;   // the vocabulary as every view shows it
    QString error;                               // one line, when refused
    std::vector<std::string> warnings;
};

// Loads the n-gram model at `path` ("": the default, default_ngram_model_path()).
ModelLoad loadModel(const std::string& path, std::uint64_t memory_budget);

// What a view that writes with the default model shows when that model is
// not installed (rich text: the package, the path looked at, the way out) or
// could not be read, and the one line for the window's banner.
QString missingModelHtml();
QString unreadableModelHtml(const QString& error);
QString missingModelMessage();

struct GenerationJob {
    std::shared_ptr<const LanguageModel> model;
    Pipeline pipeline;
    SamplingParams params;
    std::vector<PromptWord> prompt;
    GenerationState start;
    int steps = 1;
    // The first token, written in place of the drawn one (a word clicked in a plot).
    std::optional<std::int64_t> forced;
};

struct WrittenStep {
    WrittenToken token;
    std::uint64_t draws = 0;
    std::optional<double> mirostat_mu;
};

struct GenerationOutcome {
    std::vector<WrittenStep> steps;  // the tokens written, in order (they stand even when a later one is refused)
    QString error;                   // one line, when a step was refused
    QString error_field;
};

// Writes up to job.steps tokens from job.start, stopping at the model's end
// of text; each step's record is taken from its trace, which is then dropped.
GenerationOutcome runGeneration(const GenerationJob& job);

// The parameters that differ from their defaults, as "temperature 0.8, top_p 0.9"
// (the contract's, which the tab's pipeline reads).
std::string changedSettings(const SamplingParams& params);

}  // namespace samplescope::ui
