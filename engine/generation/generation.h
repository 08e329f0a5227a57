// Text written token by token: each step asks the model for the row of the
// context so far (the prompt, then the tokens generated), samples that row
// through the request's pipeline (engine/pipelines/request.h: its seed's
// stream, its history, mirostat's state), and appends the token. Penalties,
// DRY and mirostat thus act on real generated text, and a generation replays
// from its seed exactly: draws_consumed counts as the contract defines it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/models/language_model.h"
#include "engine/pipelines/request.h"

namespace samplescope {

// Where a generation stands: enough to continue it or go back to it (a tree
// of branches keeps one per node, not a copy of everything).
struct GenerationState {
    std::vector<std::int64_t> generated;  // the ids sampled so far
    std::uint64_t draws = 0;              // uniforms taken from the seed's stream
    std::optional<double> mirostat_mu;    // mirostat's state after the last step
};

struct GenerationStep {
    PipelineTrace trace;  // the step's whole trace: token, logprob, u, every stage
    std::int64_t token = 0;
    std::string text;     // the token as it reads in running text
    bool ends = false;    // the model's end of text (</s>)
};

struct GenerationOptions {
    // Stop at the model's end of text (as serving engines stop at EOS); off,
    // an n-gram model starts a new sentence after it.
    bool stop_at_end = true;
};

class Generation {
public:
    // Throws InputError for bad parameters or pipeline (Request's checks), a
    // prompt id outside [0, V), or a state that does not fit the model.
    Generation(std::shared_ptr<const LanguageModel> model, Pipeline pipeline, SamplingParams params,
               std::vector<PromptWord> prompt, GenerationOptions options = {}, GenerationState state = {});

    // Samples the next token and appends it. Throws InputError and changes
    // nothing when the text has ended, the model has no row (a rows file
    // shorter than the generation) or the row is refused.
    GenerationStep step();
    // The row the next step samples, and the row of the step that produced
    // generated token i (both without sampling anything).
    const std::vector<double>& next_row();

    // New parameters from the next step on (the seed, stream and history stay).
    void set_params(const SamplingParams& params);

    bool ended() const;
    GenerationState state() const;
    const LanguageModel& model() const { return *model_; }
    std::shared_ptr<const LanguageModel> model_ptr() const { return model_; }
    const std::vector<PromptWord>& prompt() const { return prompt_; }
    // The prompt's ids (kUnknownWord where a word is outside the vocabulary), then the generated ones.
    std::span<const std::int64_t> context() const { return context_; }
    std::span<const std::int64_t> generated() const {
        return std::span(context_).subspan(prompt_.size());
    }
    const Request& request() const { return request_; }
    const GenerationOptions& options() const { return options_; }
    // The prompt and the generated tokens as running text.
    std::string text() const;
    std::string generated_text() const;

private:
    std::shared_ptr<const LanguageModel> model_;
    std::vector<PromptWord> prompt_;
    GenerationOptions options_;
    std::vector<std::int64_t> context_;
    Request request_;
    std::vector<double> row_;
    bool row_ready_ = false;
};

// The ids of the prompt words the model knows: the prompt ids a request's
// penalties read (an unknown word has no id to penalise).
std::vector<std::int64_t> known_prompt_ids(std::span<const PromptWord> prompt);

// Running text from tokens: words joined by single spaces, a sentence end
// ("." for </s>) attached to the word before it.
std::string join_token_texts(std::span<const std::string> texts);

}  // namespace samplescope
