// The pipeline's stages, in the contract's order (contract section 2), and the
// descriptor each stage registers from its own file (engine/stages/stage_*.cpp):
// its name, title and summary, its parameters (the rows of kParams), its gate,
// its rules with their citations, how its plot marks it, and its code. Every
// table (kStages, kParams, kRules), switch (uses_*(), the badges, the batch
// engine's refusals) and the Help text is read from the descriptors.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engine/core/sampling_params.h"

namespace samplescope {

// The stages in the contract's order; llama.cpp's extra stages sit where its
// chain runs them. A new stage is one value here (before Softmax) and one
// stage_<name>.cpp with its descriptor; the draw stays last.
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
inline constexpr std::size_t kStageCount = static_cast<std::size_t>(Stage::Draw) + 1;

// Every rule a pipeline step can follow, grouped by stage (the contract's rule
// first in each group). Several stacks share a rule; each is described, with
// the source it was read in, by its stage's descriptor. A new one goes just
// above Count.
enum class Rule : int {
    // Logit bias: added to the listed logits.
    LogitBiasAdd,
    // Repetition penalty: which ids it covers (the sign test is the same everywhere).
    RepetitionContext,
    RepetitionOutputOnly,
    RepetitionLastN,
    // Presence and frequency: which occurrences count.
    PresenceFrequencyOutput,
    PresenceFrequencyLastN,
    // Greedy: what temperature switches the draw off.
    GreedyContract,
    GreedyVllm,
    GreedySglang,
    GreedyHf,
    // Temperature.
    TemperatureDivide,
    TemperatureVllm,
    TemperatureLlamaCpp,
    // Top-k: who survives a tie at the k-th value.
    TopKContract,
    TopKKeepTies,
    TopKExactUnstable,
    TopKFlashInfer,
    // Top-p: the comparison that decides the boundary.
    TopPContract,
    TopPAscendingCumsum,
    TopPAscendingCumsumStable,
    TopPExclusivePrefix,
    TopPExclusivePrefixStrict,
    TopPInclusiveCumsum,
    TopPMassAboveByValue,
    // Min-p: the space the floor is compared in.
    MinPProb,
    MinPLog,
    // Typical-p (llama.cpp only).
    TypicalPLlamaCpp,
    // Top-n-sigma (llama.cpp only).
    TopNSigmaLlamaCpp,
    // llama.cpp's DRY, XTC and mirostat (v1 or v2, as the mirostat parameter says).
    DryLlamaCpp,
    XtcLlamaCpp,
    MirostatLlamaCpp,
    Count  // not a rule: how many there are
};
inline constexpr std::size_t kRuleCount = static_cast<std::size_t>(Rule::Count);

struct RuleInfo {
    Rule rule;
    Stage stage;                 // the stage this rule belongs to
    std::string_view name;       // machine name: "top_p:ascending_cumsum" is written as stage:name
    std::string_view title;      // short human title, as in a combo box
    std::string_view stacks;     // which pipelines use it
    std::string_view summary;    // the comparison, literally
    std::string_view citation;   // repository, file, function
    bool unstable_ties;          // the stack breaks ties by an unstable sort (lower id here, flagged)
};

// How a stage's plot marks what the stage decided (ui/stages/stage_plot.cpp
// draws each kind from the stage's trace). A stage that reports what an
// existing kind shows takes that kind and needs no drawing code of its own.
enum class PlotMark : int {
    None,                // the kept and dropped bars alone
    KthLogit,            // a threshold on the logits at the k-th rank, and the cut after rank k (kth_logit)
    CumulativeMass,      // the ranked running mass, its target and the crossing token (crossing_*, walk_mass)
    ProbFloor,           // a floor on q (prob_floor, max_prob)
    TypicalEntropy,      // exp(-H), the q of score 0, and the crossing (entropy, crossing_*)
    LogitFloor,          // a floor on the logits, with the ranked logits (logit_floor, max_logit, ...)
    LogitBiasList,       // the bias list in a note
    DryPenalties,        // each penalised id's penalty and repeat length (dry_*)
    XtcRemoved,          // the threshold on q before and the ids the coin removes (xtc_*)
    MirostatMu,          // q = 2^-mu (v2) or the Zipf k (v1) (mirostat_*)
    DynamicTemperature,  // the temperature the entropy gave (temperature_used)
};

struct StageUnit;  // a stage's code (engine/stages/stage_unit.h)

struct StageDescriptor {
    Stage stage;
    std::string_view name;     // machine name, as in the JSON trace
    std::string_view title;    // human title, as on the plots
    std::string_view summary;  // one sentence: what the stage does
    bool truncates = false;    // does it shrink the kept set by a rule of its own
    // Whether the contract's pipeline (`spec`) holds it, and so the batch
    // engine runs it. The other stages are llama.cpp's extra samplers
    // (docs/samplers.md): a pipeline may name them, the contract's trace and
    // the GUI's main view never show them, the batch engine refuses them.
    bool contract = false;
    // Whether it writes logits (a penalty, a bias, the temperature) rather
    // than only choosing the kept set; the plots draw the q before as well.
    bool changes_logits = false;
    PlotMark mark = PlotMark::None;
    // The parameters it owns: the rows of kParams (a parameter other stages
    // read too, such as min_keep, is owned by one of them).
    std::span<const ParamInfo> params = {};
    std::span<const ListParamInfo> lists = {};
    // Its rules, the contract's first: the rows of kRules.
    std::span<const RuleInfo> rules = {};
    // Whether the stage is on for these parameters and V ids; null: always
    // (widen, softmax, draw).
    bool (*gate)(const SamplingParams& params, std::size_t vocab) = nullptr;
    // Why it did nothing, in words, for a plot of it off ("Off: top_p = 1 (off at >= 1).\n...").
    std::string (*off_reason)(const SamplingParams& params, std::size_t vocab) = nullptr;
    // Its formula with these parameters' values, for a plot's tooltip; null: the summary says it.
    std::string (*formula)(const SamplingParams& params) = nullptr;
    // Its code (engine/stages); null for widen, softmax and draw, which the runner does itself.
    const StageUnit* unit = nullptr;
};

// Every stage's descriptor, one per engine/stages/stage_*.cpp, as the build
// lists them (engine/CMakeLists.txt writes this function). The tables below
// are built from it when first read, and the build is refused at that point,
// with the reason, when a Stage, Param or Rule has no row or two, or a row
// disagrees with SamplingParams' defaults.
std::span<const StageDescriptor* const> registered_stage_descriptors();

// The tables, in enum order: `for (const auto& info : kStages)`, kStages[i].
struct StageTable {
    const StageDescriptor* begin() const;
    const StageDescriptor* end() const;
    std::size_t size() const { return kStageCount; }
    const StageDescriptor& operator[](std::size_t i) const { return begin()[i]; }
};
inline constexpr StageTable kStages{};

struct RuleTable {
    const RuleInfo* begin() const;
    const RuleInfo* end() const;
    std::size_t size() const { return kRuleCount; }
    const RuleInfo& operator[](std::size_t i) const { return begin()[i]; }
};
inline constexpr RuleTable kRules{};

const StageDescriptor& stage_info(Stage stage);
std::optional<Stage> stage_from_name(std::string_view name);
// The descriptor's gate: whether the stage is on for these parameters and V ids.
bool stage_on(Stage stage, const SamplingParams& params, std::size_t vocab);
// The stage whose descriptor owns a parameter's row, or a list parameter.
Stage param_stage(Param param);
Stage list_param_stage(const ListParamInfo& info);

const RuleInfo& rule_info(Rule rule);

// Throws std::logic_error naming what is wrong when the descriptors do not
// make whole tables (the tables call it when first read; tests call it too).
void check_stage_descriptors(std::span<const StageDescriptor* const> descriptors);

}  // namespace samplescope
