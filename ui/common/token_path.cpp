#include "ui/common/token_path.h"

#include <cmath>
#include <cstdio>

#include "engine/base/number_text.h"
#include "ui/common/plot_data.h"

namespace samplescope::ui {

namespace {

// Four significant digits: enough to follow a number by eye (the token
// table's tooltips give round-trip values).
std::string short_number(double value) {
    if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", value);
    return text;
}

std::string title_of(Stage stage) { return std::string(stage_info(stage).title); }

bool changes_logits(Stage stage) { return stage_info(stage).changes_logits; }

}  // namespace

std::vector<TokenPathStep> tokenPath(const SampleTrace& trace, std::int32_t id) {
    std::vector<TokenPathStep> steps;
    if (id < 0 || static_cast<std::size_t>(id) >= trace.vocab_size || trace.stages.empty()) return steps;
    const auto at = static_cast<std::size_t>(id);
    const StageTrace* previous = nullptr;
    for (const StageTrace& stage : trace.stages) {
        const Stage s = stage.stage;
        if (s == Stage::Widen) {
            const double logit = (*stage.logits)[at];
            steps.push_back({s, "logit " + short_number(logit), false});
            if (!stage.keeps(id)) {
                steps.back().text += " (-inf: never kept)";
                steps.back().dropped = true;
                return steps;
            }
        } else if (!stage.active) {
            // Off, or skipped after greedy: nothing to follow.
        } else if (changes_logits(s)) {
            const double before = (*previous->logits)[at];
            const double after = (*stage.logits)[at];
            if (s == Stage::Temperature) {
                const double t = stage.temperature_used.value_or(trace.params.temperature);
                steps.push_back({s, "/ T " + short_number(t) + " = " + short_number(after) + " (q " +
                                        short_number(stage.prob_of(id)) + ")",
                                 false});
            } else if (after != before) {
                steps.push_back({s, title_of(s) + " " + short_number(after), false});
            }
            if (!stage.keeps(id)) {
                steps.back().text += ", banned";
                steps.back().dropped = true;
                return steps;
            }
        } else if (s == Stage::Greedy) {
            const bool wins = stage.keeps(id);
            steps.push_back({s, wins ? "greedy: the argmax" : "greedy: not the argmax (token " + format_count(static_cast<std::uint64_t>(trace.token)) + ")",
                             !wins});
            if (!wins) return steps;
        } else if (stage_info(s).truncates) {
            const std::size_t rank = rankOf(*previous->kept, *stage.logits, id);
            const bool kept = stage.keeps(id);
            std::string text = title_of(s) + (kept ? ": kept" : ": dropped");
            if (rank > 0) text += ", rank " + format_count(rank) + " of " + format_count(previous->kept->size());
            if (kept && s != Stage::Mirostat) text += " (q " + short_number(stage.prob_of(id)) + ")";
            steps.push_back({s, std::move(text), !kept});
            if (!kept) return steps;
        } else if (s == Stage::Softmax) {
            steps.push_back({s, "final q " + short_number(stage.prob_of(id)), false});
        } else if (s == Stage::Draw) {
            steps.push_back({s, trace.token == id ? "drawn" : "not drawn (token " + format_count(static_cast<std::uint64_t>(trace.token)) + ")", false});
        }
        previous = &stage;
    }
    return steps;
}

std::string tokenPathText(const std::vector<TokenPathStep>& steps) {
    std::string text;
    for (const auto& step : steps) {
        if (!text.empty()) text += " -> ";
        text += step.text;
    }
    return text;
}

}  // namespace samplescope::ui
