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
    LogitBias,
    RepetitionPenalty,
    PresenceFrequency,
    Dry,
    Greedy,
    Temperature,
    TopNSigma,
    TopK,
    TypicalP,
    TopP,
    MinP,
    Xtc,
    Mirostat,
    Softmax,
    Draw,
};

struct StageInfo {
    Stage stage;
    std::string_view name;     // machine name, as in the JSON trace
    std::string_view title;    // human title, as on the plots
    std::string_view summary;  // one sentence: what the stage does
    bool truncates;            // does it shrink the kept set by a rule of its own
    // Whether the contract's pipeline (`spec`) holds it. The other stages are
    // llama.cpp's extra samplers (docs/samplers.md): a pipeline may name them,
    // the contract's trace and the GUI's main view never show them.
    bool contract;
};

inline constexpr std::array<StageInfo, 16> kStages{{
    {Stage::Widen, "widen", "Raw logits", "Each logit widened to f64; -inf ids can never be kept.", false, true},
    {Stage::LogitBias, "logit_bias", "Logit bias", "Each listed id's logit plus its bias; a bias of -inf bans the id.",
     false, false},
    {Stage::RepetitionPenalty, "repetition_penalty", "Repetition penalty",
     "Ids seen in prompt or output: positive logits divided by r, others multiplied by r.", false, true},
    {Stage::PresenceFrequency, "presence_frequency", "Presence / frequency",
     "Ids generated c > 0 times lose frequency x c + presence.", false, true},
    {Stage::Dry, "dry", "DRY",
     "An id that would extend a repeated suffix of length L >= allowed loses multiplier x base^(L - allowed).", false,
     false},
    {Stage::Greedy, "greedy", "Greedy", "T = 0: the largest logit wins (ties to the lowest id); no draw.", false, true},
    {Stage::Temperature, "temperature", "Temperature", "Every logit divided by T.", false, true},
    {Stage::TopNSigma, "top_n_sigma", "Top-n-sigma", "Keep logits >= max l - n x sigma of the candidates' logits.",
     true, false},
    {Stage::TopK, "top_k", "Top-k", "Keep the k best by (logit desc, id asc).", true, true},
    {Stage::TypicalP, "typical_p", "Typical-p",
     "Rank by |-log q - H| (H the entropy of q); keep the shortest such prefix whose mass passes p.", true, false},
    {Stage::TopP, "top_p", "Top-p", "Keep the shortest ranked prefix whose mass reaches p, crossing token included.",
     true, true},
    {Stage::MinP, "min_p", "Min-p", "Keep ids with q >= min_p x max q over the kept set.", true, true},
    {Stage::Xtc, "xtc", "XTC",
     "With probability p, drop every id with q >= threshold but the least likely of them (two or more qualifying).",
     true, false},
    {Stage::Mirostat, "mirostat", "Mirostat",
     "Keep the ids whose surprise -log2 q fits mu (v2), or the top k that Zipf's law gives for mu (v1).", true,
     false},
    {Stage::Softmax, "softmax", "Final distribution", "Softmax over the kept set.", false, true},
    {Stage::Draw, "draw", "Draw", "One uniform u; inverse CDF in ascending id order.", false, true},
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
