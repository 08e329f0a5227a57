// The `rows` model: a recorded [T, V] logits file (a real model's dump, one
// row per generated position) replayed as a generation. Step t of a
// generation gets row t whatever the context holds, so the pipeline's stages,
// penalties and seeds can be studied on a real model's rows; a [B, T, V]
// array gives the T positions of one batch row.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/io/logits_loader.h"
#include "engine/models/language_model.h"

namespace samplescope {

class RowsModel final : public LanguageModel {
public:
    // T rows of V logits; `labels` V labels or none. Throws InputError when a
    // row holds NaN or +inf (the contract's rule) or the labels do not fit V.
    RowsModel(LogitsMatrix rows, std::vector<std::string> labels, std::string source);

    std::string_view kind() const override { return "rows"; }
    std::string description() const override;
    std::size_t vocab_size() const override { return rows_.cols; }
    const std::vector<std::string>& labels() const override { return labels_; }
    void next_logits(const ModelContext& context, std::vector<double>& row) const override;
    // A rows file has no tokenizer: always refuses (prompts are given as ids).
    std::vector<PromptWord> tokenize(std::string_view prompt) const override;
    std::optional<std::size_t> max_generated() const override { return rows_.rows; }

    std::size_t row_count() const { return rows_.rows; }

private:
    LogitsMatrix rows_;
    std::vector<std::string> labels_;
    std::string source_;
};

}  // namespace samplescope
