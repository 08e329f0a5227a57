// A next-token model: a vocabulary, and for a context of ids the logits row of
// the next token. Generation (engine/generation/) asks it for one row per
// step and samples that row through a pipeline, so every stage acts on real
// text. Two models: `ngram` (ngram_model.h, a back-off language model) and
// `rows` (rows_model.h, a recorded [T, V] logits file replayed step by step).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace samplescope {

// A prompt word outside the model's vocabulary: it stays in the context, shown
// as unknown, and the model cannot condition on it (an n-gram model backs off
// to the words after it).
inline constexpr std::int64_t kUnknownWord = -1;

struct PromptWord {
    std::string text;  // as typed (after splitting)
    std::int64_t id = kUnknownWord;
};

// What the model conditions on: the prompt's ids, then the generated ones.
struct ModelContext {
    std::span<const std::int64_t> ids;  // kUnknownWord for words outside the vocabulary
    std::size_t prompt_length = 0;      // the first prompt_length ids are the prompt's
    std::size_t generated() const { return ids.size() - prompt_length; }
};

class LanguageModel {
public:
    virtual ~LanguageModel() = default;

    virtual std::string_view kind() const = 0;       // "ngram", "rows"
    virtual std::string description() const = 0;     // one line: the file, V, what it conditions on
    virtual std::size_t vocab_size() const = 0;
    // The vocabulary's labels, V of them, or none (a rows file without a vocabulary).
    virtual const std::vector<std::string>& labels() const = 0;

    // The logits of the next token after `context`, into `row` (resized to V).
    // Throws InputError when the model has no row for it (a rows file shorter
    // than the generation).
    virtual void next_logits(const ModelContext& context, std::vector<double>& row) const = 0;

    // The prompt split into words, each looked up. Throws InputError("prompt")
    // for text the model cannot take.
    virtual std::vector<PromptWord> tokenize(std::string_view prompt) const = 0;

    // A token as it reads in running text.
    virtual std::string token_text(std::int64_t id) const;
    // The token that ends a text, when the model has one.
    virtual std::optional<std::int64_t> end_id() const { return std::nullopt; }
    // How many tokens the model can generate, when it is bounded (a rows file's T).
    virtual std::optional<std::size_t> max_generated() const { return std::nullopt; }
};

// The prompt as the CLI and the GUI check it before a model tokenizes it:
// valid UTF-8, no control bytes, at most kMaxPromptBytes. Throws InputError("prompt").
void check_prompt_text(std::string_view prompt);
inline constexpr std::size_t kMaxPromptBytes = 1 << 20;
// A prompt of more words than this is refused: generation keeps the whole
// context (the penalties read it), and no lesson needs a longer one.
inline constexpr std::size_t kMaxPromptWords = 10000;

}  // namespace samplescope
