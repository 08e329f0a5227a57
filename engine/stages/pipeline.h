// Sampling pipelines: an ordered list of steps, each naming a Stage of
// engine/core/stage.h and the Rule that stage follows (each stage's
// descriptor lists its rules with the source each was read in). The contract's own pipeline
// is one of them (`spec`); the others model how a serving stack orders and
// bounds the same knobs (docs/pipelines.md, with the source of every rule).
//
// A pipeline models a stack's kept set and final distribution. Every pipeline
// draws with the contract's stream (engine/core/generator.h: one uniform_f64 per
// sampled token, inverse CDF in ascending id order), so two pipelines given
// the same seed differ only where their semantics differ. None reproduces a
// stack's own random numbers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/sampling_params.h"
#include "engine/core/stage.h"
#include "engine/core/trace.h"

namespace samplescope {

// The rules a stage may follow, in its descriptor's order (the first is the contract's).
std::vector<Rule> rules_for_stage(Stage stage);
std::optional<Rule> rule_from_name(Stage stage, std::string_view name);

// The stages a pipeline step may name: the ones with a unit, between widening and the final softmax.
bool is_step_stage(Stage stage);


struct PipelineStep {
    Stage stage = Stage::TopK;
    Rule rule = Rule::TopKContract;
    bool enabled = true;
    // A truncation step that sees the same distribution as the truncation step
    // before it (a joint filter, SGLang's torch path, FlashInfer "joint")
    // rather than that step's renormalised result.
    bool joint = false;
};

struct Pipeline {
    std::string name;   // "spec", "vllm", ..., "custom"
    std::string title;
    std::vector<PipelineStep> steps;
    std::int64_t penalty_last_n = 64;  // the window of the last_n penalty rules (llama.cpp default)
    // Only `spec`: the contract's own pipeline, whose traces print as the
    // contract's JSON (engine/json/trace_json.h) rather than a preset's.
    bool reference = false;
    // Joint steps are joint only while min-p is off: SGLang's FlashInfer
    // backend filters top-k and top-p on one distribution, but when min-p is on
    // it renormalises after top-k and after top-p instead.
    bool joint_only_without_min_p = false;
    // llama.cpp: with mirostat 1 or 2 the chain is logit bias, temperature
    // (without its dynamic range) and mirostat; every other step is skipped.
    bool mirostat_replaces_chain = false;

    const PipelineStep* find_step(Stage stage) const;
};

// Whether llama.cpp's mirostat chain replaces the pipeline's steps for these
// parameters (Pipeline::mirostat_replaces_chain and mirostat on), and whether
// a step runs in that chain (logit bias, temperature, mirostat).
bool mirostat_chain(const Pipeline& pipeline, const SamplingParams& params);
bool in_mirostat_chain(Stage stage);

// Throws InputError for a step naming a stage twice, a stage that is not a
// step stage, a rule of another stage, a joint step that follows no
// truncation step, or a negative window.
void check_pipeline(const Pipeline& pipeline);

// What one run of a pipeline did, besides the SampleTrace: per stage (aligned
// with SampleTrace::stages), the rule it followed and what it flagged.
struct StepReport {
    Stage stage = Stage::Widen;
    std::optional<Rule> rule;   // none for widening, the final softmax and the draw
    bool joint = false;
    bool tie_at_boundary = false;  // an unstable sort had to choose among equal values; lower id kept
    bool near_boundary = false;    // a keep-or-drop decision within 1e-6 of its threshold
    std::string note;              // one line, e.g. "temperature raised to 0.01"
};

// The arithmetic a run computes in. F64 is the model every trace reports;
// F32 repeats the run the way the stacks compute, in float32: the row and the
// parameters rounded to float32 and every operation's result rounded again,
// so ties that exist only in float32, masses that cross a threshold only in
// float32 and probabilities that underflow to 0 show up where the engine
// would see them.
enum class Arithmetic { F64, F32 };

// What the float32 run of a preset left, reported when it differs from the
// f64 model: a different set of ids with nonzero probability (the ids a draw
// can reach), probabilities more than kEngineF32Tolerance apart, a tie among
// equal float32 values at a boundary, or a refusal the f64 model does not
// meet (an overflow to inf).
struct EngineF32 {
    IdList kept;          // the float32 run's kept set, ascending (ids whose q underflowed to 0 included)
    Values probs;         // their probabilities, aligned with kept
    bool tie_at_boundary = false;
    double max_prob_difference = 0.0;  // over the ids both runs kept
    std::string error;    // the float32 run's refusal, when it refused
    std::string note;     // one line saying what differs
};
inline constexpr double kEngineF32Tolerance = 1e-6;

// One of an engine's logprob modes: what it would return for the sampled token.
struct EngineLogprob {
    std::string mode;      // the engine's own name for the mode, e.g. "raw_logprobs"
    double value = 0.0;    // -inf where the token is masked at that point
    bool is_default = false;
    std::string meaning;   // one line: what the number is
};

// XTC's coin decides between two distributions; the exact final
// distribution of the step is their mixture, which a histogram of many draws
// (each with its own coin) is tested against.
struct XtcMixture {
    double probability = 0.0;  // p
    double coin = 0.0;         // this step's u (label 6); it fired when u < p
    bool fired = false;
    IdList removed;            // the ids the coin removes when it fires, ascending
    IdList kept_without;       // the final distribution when the coin does not fire
    Values probs_without;
    IdList kept_with;          // and when it fires
    Values probs_with;
    IdList ids;                // (1 - p) q_without + p q_with, over the union, ascending
    Values probs;
};

// Mirostat's state around one step.
struct MirostatStep {
    std::int64_t version = 0;
    double mu_before = 0.0;
    double mu_after = 0.0;     // mu - eta (surprise - tau)
    double surprise = 0.0;     // -log2 of the drawn token's final q, in bits
};

struct PipelineTrace {
    std::string pipeline;         // its name
    SampleTrace trace;            // stages in the pipeline's own order
    std::vector<StepReport> reports;  // aligned with trace.stages

    // The same step in the engine's own float32 arithmetic, present only
    // where it decides differently (below).
    std::optional<EngineF32> engine_f32;
    // What the modelled engine's own validation would refuse in these
    // parameters, one line each ("vLLM would refuse this request: ..."); the
    // trace is still computed, as the model of what the knobs mean.
    std::vector<std::string> engine_refusals;
    // The token's logprob as the engine returns it, in each of its modes.
    std::vector<EngineLogprob> engine_logprobs;
    // Present when an XTC step's coin could change the kept set.
    std::optional<XtcMixture> xtc;
    // Present when a mirostat step ran.
    std::optional<MirostatStep> mirostat;

    bool any_tie() const;
    bool any_near_boundary() const;
    // The exact distribution a draw of this step follows: the final kept set
    // and q, or with an XTC coin the mixture of its two outcomes.
    const IdList& exact_ids() const { return xtc ? xtc->ids : trace.final_kept(); }
    const Values& exact_probs() const { return xtc ? xtc->probs : trace.final_probs(); }
};

// What a step's logprob needs of its penalised row (the maximum and the
// partition of step 9 over all V ids), kept by a caller between its steps: a
// step whose penalised row equals the last one's bit for bit takes these sums
// instead of a pass of V exponentials. The same numbers in the same order give
// the same sums, so the logprob is the one the step would compute. A caller
// that changes only what comes after the penalties (temperature, truncation)
// pays one comparison of the row. Not thread-safe: one per thread of steps.
struct LogprobMemo {
    std::shared_ptr<const std::vector<double>> row;  // held: a later step's writes copy it first
    double max_logit = 0.0;
    double partition = 0.0;
};

// One row and its parameters, as every pipeline function takes them.
struct PipelineInput {
    std::span<const double> logits;
    SamplingParams params;
    std::span<const std::int64_t> prompt_ids;
    std::span<const std::int64_t> output_ids;
    // XTC's coin for this step: a uniform in [0, 1). run_pipeline takes it
    // from the XTC stream (generator.h xtc_coin) when absent.
    std::optional<double> xtc_coin = std::nullopt;
    // Mirostat's mu before this step; 2 tau (a fresh request) when absent.
    std::optional<double> mirostat_mu = std::nullopt;
    // The caller's memo of the last step's logprob sums (none: computed).
    LogprobMemo* logprob_memo = nullptr;
};

}  // namespace samplescope
