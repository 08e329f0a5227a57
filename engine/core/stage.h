// The pipeline's stages, in the contract's order (contract section 2). This list
// is the single source of stage names for the engine, the kernels' traces, the
// CLI's JSON and the GUI's plots.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace samplescope {

enum class Stage : int {
    Widen,
    RepetitionPenalty,
    PresenceFrequency,
    Greedy,
    Temperature,
    TopK,
    TopP,
    MinP,
    Softmax,
    Draw,
};

struct StageInfo {
    Stage stage;
    std::string_view name;     // machine name, as in the JSON trace
    std::string_view title;    // human title, as on the plots
    std::string_view summary;  // one sentence: what the stage does
    bool truncates;            // does it shrink the kept set by a rule of its own
};

inline constexpr std::array<StageInfo, 10> kStages{{
    {Stage::Widen, "widen", "Raw logits", "Each logit widened to f64; -inf ids can never be kept.", false},
    {Stage::RepetitionPenalty, "repetition_penalty", "Repetition penalty",
     "Ids seen in prompt or output: positive logits divided by r, others multiplied by r.", false},
    {Stage::PresenceFrequency, "presence_frequency", "Presence / frequency",
     "Ids generated c > 0 times lose frequency x c + presence.", false},
    {Stage::Greedy, "greedy", "Greedy", "T = 0: the largest logit wins (ties to the lowest id); no draw.", false},
    {Stage::Temperature, "temperature", "Temperature", "Every logit divided by T.", false},
    {Stage::TopK, "top_k", "Top-k", "Keep the k best by (logit desc, id asc).", true},
    {Stage::TopP, "top_p", "Top-p", "Keep the shortest ranked prefix whose mass reaches p, crossing token included.",
     true},
    {Stage::MinP, "min_p", "Min-p", "Keep ids with q >= min_p x max q over the kept set.", true},
    {Stage::Softmax, "softmax", "Final distribution", "Softmax over the kept set.", false},
    {Stage::Draw, "draw", "Draw", "One uniform u; inverse CDF in ascending id order.", false},
}};

inline constexpr std::size_t kStageCount = kStages.size();

constexpr const StageInfo& stage_info(Stage stage) { return kStages[static_cast<std::size_t>(stage)]; }

inline std::optional<Stage> stage_from_name(std::string_view name) {
    for (const auto& info : kStages) {
        if (info.name == name) return info.stage;
    }
    return std::nullopt;
}

}  // namespace samplescope
