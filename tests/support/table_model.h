// A next-token model written out in a test: V known probabilities per row,
// the row chosen by the last token of the context (row 0 after a prompt whose
// last word is unknown or absent, row t + 1 after token t), so a test knows
// every number beam search or speculative decoding meets.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "engine/models/language_model.h"

namespace samplescope::testing {

class TableModel final : public LanguageModel {
public:
    // rows[0] after the prompt, rows[t + 1] after token t; labels "a", "b", ... unless given.
    explicit TableModel(std::vector<std::vector<double>> rows, std::optional<std::int64_t> end = std::nullopt,
                        std::vector<std::string> labels = {})
        : rows_(std::move(rows)), end_(end), labels_(std::move(labels)) {
        if (labels_.empty()) {
            for (std::size_t i = 0; i < rows_.front().size(); ++i) labels_.emplace_back(1, static_cast<char>('a' + i));
        }
    }
    std::string_view kind() const override { return "table"; }
    std::string description() const override { return "a table of " + std::to_string(rows_.size()) + " rows"; }
    std::size_t vocab_size() const override { return rows_.front().size(); }
    const std::vector<std::string>& labels() const override { return labels_; }
    // logits = ln(probability): -inf where it is 0.
    void next_logits(const ModelContext& context, std::vector<double>& row) const override {
        const std::int64_t last = context.ids.empty() ? -1 : context.ids.back();
        const auto& probs = rows_.at(static_cast<std::size_t>(last < 0 ? 0 : last + 1));
        row.resize(probs.size());
        for (std::size_t i = 0; i < probs.size(); ++i) row[i] = std::log(probs[i]);
    }
    std::vector<PromptWord> tokenize(std::string_view) const override { return {{"x", kUnknownWord}}; }
    std::optional<std::int64_t> end_id() const override { return end_; }
    std::string token_text(std::int64_t id) const override {
        return end_ && id == *end_ ? "." : labels_.at(static_cast<std::size_t>(id));
    }

private:
    std::vector<std::vector<double>> rows_;
    std::optional<std::int64_t> end_;
    std::vector<std::string> labels_;
};

}  // namespace samplescope::testing
