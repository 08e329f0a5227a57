// The Beam tab's work, callable from any thread: a beam search's steps
// (engine/generation/beam.h) run on a copy of the tab's BeamSearch, and a
// sampled continuation of the same prompt written as the Generate tab writes
// it (generation_jobs.h runGeneration: the window's pipeline, parameters and
// seed), with each of its tokens' log-probability under the model itself, the
// measure beam search sums, so the two texts' totals compare.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <QString>

#include "engine/generation/beam.h"
#include "ui/generate/generation_jobs.h"

namespace samplescope::ui {

struct BeamJob {
    std::optional<BeamSearch> search;  // run to its end when given
    std::optional<GenerationJob> sample;
};

struct SampledText {
    std::vector<WrittenStep> steps;     // as the Generate tab records them
    std::vector<double> model_logprobs;  // log_softmax of the model's row at each token
    QString error;                      // one line, when a step was refused (the tokens before it stand)
};

struct BeamOutcome {
    std::vector<BeamStep> steps;  // when a search ran
    std::vector<BeamHypothesis> result;
    QString error;
    std::optional<SampledText> sample;  // when a sample was asked for
};

BeamOutcome runBeamJob(BeamJob job);

// The model's log-probability of each of `tokens` after the prompt and the
// tokens before it: log_softmax of the model's row, as beam search scores them.
std::vector<double> modelLogprobs(const LanguageModel& model, std::span<const PromptWord> prompt,
                                  std::span<const std::int64_t> tokens);

}  // namespace samplescope::ui
