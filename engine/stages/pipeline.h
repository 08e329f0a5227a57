// Sampling pipelines: an ordered list of steps, each naming a Stage of
// engine/core/stage.h and the rule that stage follows. The contract's own pipeline
// is one of them (`spec`); the others model how a serving stack orders and
// bounds the same knobs (docs/pipelines.md, with the source of every rule).
//
// A pipeline models a stack's kept set and final distribution. Every pipeline
// draws with the contract's stream (engine/core/generator.h: one uniform_f64 per
// sampled token, inverse CDF in ascending id order), so two pipelines given
// the same seed differ only where their semantics differ. None reproduces a
// stack's own random numbers.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/sampling_params.h"
#include "engine/core/stage.h"
#include "engine/core/trace.h"

namespace samplescope {

// Every rule a step can follow. Several stacks share a rule; the table below
// names them and the source each was read in.
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
};

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

inline constexpr std::array<RuleInfo, 31> kRules{{
    {Rule::LogitBiasAdd, Stage::LogitBias, "add", "l + bias", "llamacpp",
     "For each listed (id, bias): l[id] += bias; a bias of -inf bans the id. Applied first, before the penalties.",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_logit_bias_apply; common/sampling.cpp "
     "common_sampler_init (logit bias added to the chain first)",
     false},
    {Rule::RepetitionContext, Stage::RepetitionPenalty, "context", "Prompt and output ids",
     "spec, vllm, hf", "Every distinct id of prompt and output: l > 0 ? l / r : l * r.",
     "vllm-project/vllm vllm/model_executor/layers/utils.py apply_penalties; huggingface/transformers "
     "src/transformers/generation/logits_process.py RepetitionPenaltyLogitsProcessor",
     false},
    {Rule::RepetitionOutputOnly, Stage::RepetitionPenalty, "output_only", "Output ids only", "sglang",
     "Only ids generated so far; the prompt is not penalised.",
     "sgl-project/sglang python/sglang/srt/sampling/penaltylib/repetition_penalty.py _cumulate_output_tokens",
     false},
    {Rule::RepetitionLastN, Stage::RepetitionPenalty, "last_n", "Last N of prompt + output", "llamacpp",
     "Ids among the last N accepted tokens (prompt tail and output), N = penalty_last_n.",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_penalties_apply", false},
    {Rule::PresenceFrequencyOutput, Stage::PresenceFrequency, "output", "Output counts (OpenAI)",
     "spec, vllm, sglang", "l - frequency x c - presence, c = times generated.",
     "vllm-project/vllm vllm/model_executor/layers/utils.py apply_penalties; sgl-project/sglang "
     "python/sglang/srt/sampling/penaltylib/frequency_penalty.py, presence_penalty.py",
     false},
    {Rule::PresenceFrequencyLastN, Stage::PresenceFrequency, "last_n", "Counts in the last N", "llamacpp",
     "l - (c x frequency + presence), c = count among the last N accepted tokens.",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_penalties_apply", false},
    {Rule::GreedyContract, Stage::Greedy, "contract", "T = 0", "spec, flashinfer-*",
     "T == 0: argmax, ties to the lowest id, no draw.", "sampling contract section 2, step 5", false},
    {Rule::GreedyVllm, Stage::Greedy, "vllm", "T = 0", "vllm",
     "T < 1e-5 after 0 < T < 0.01 was raised to 0.01, so only T = 0: argmax of the penalised logits, ties to the "
     "first index, no draw.",
     "vllm-project/vllm vllm/sampling_params.py SamplingParams.__post_init__ (_MAX_TEMP, then _SAMPLING_EPS); "
     "vllm/v1/sample/sampler.py Sampler.sample",
     false},
    {Rule::GreedySglang, Stage::Greedy, "sglang", "T < 1e-6", "sglang",
     "T < 1e-6: T := 1, top_k := 1; an all-greedy batch takes argmax (ties to the first index), no draw.",
     "sgl-project/sglang python/sglang/srt/sampling/sampling_params.py SamplingParams.__init__; "
     "python/sglang/srt/layers/sampler.py Sampler.forward",
     false},
    {Rule::GreedyHf, Stage::Greedy, "hf", "do_sample = False", "hf",
     "T = 0 stands for do_sample=False: argmax of the processed scores, ties to the first index, no draw.",
     "huggingface/transformers src/transformers/generation/utils.py GenerationMixin._sample", false},
    {Rule::TemperatureDivide, Stage::Temperature, "divide", "l / T", "spec, sglang, hf, flashinfer-*",
     "Every logit divided by T.",
     "huggingface/transformers src/transformers/generation/logits_process.py TemperatureLogitsWarper; "
     "sgl-project/sglang python/sglang/srt/layers/sampler.py Sampler.forward",
     false},
    {Rule::TemperatureVllm, Stage::Temperature, "vllm", "l / T, T raised to 0.01", "vllm",
     "0 < T < 1e-2 is raised to 1e-2 (_MAX_TEMP); then l / T.",
     "vllm-project/vllm vllm/sampling_params.py SamplingParams.__post_init__ (_MAX_TEMP); "
     "vllm/v1/sample/sampler.py Sampler.sample",
     false},
    {Rule::TemperatureLlamaCpp, Stage::Temperature, "llamacpp", "l / T; T <= 0 keeps the max", "llamacpp",
     "T <= 0: only the first maximal logit stays (the draw still runs over it); else l / T. With a dynamic "
     "range d > 0 (and two or more candidates): T' = lo + (hi - lo) (H / log n)^exponent, lo = max(0, T - d), "
     "hi = T + d, H the entropy of the candidates' q.",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_temp_ext_apply, llama_sampler_temp_impl", true},
    {Rule::TopKContract, Stage::TopK, "contract", "Exactly k, lower id first", "spec",
     "The first k by (logit desc, id asc).", "sampling contract section 2, step 6", false},
    {Rule::TopKKeepTies, Stage::TopK, "keep_ties", "Keep all equal to the k-th", "vllm, hf",
     "Drop l < k-th logit: every id tied with the k-th value stays.",
     "vllm-project/vllm vllm/v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p; huggingface/transformers "
     "src/transformers/generation/logits_process.py TopKLogitsWarper",
     false},
    {Rule::TopKExactUnstable, Stage::TopK, "exact", "Exactly k, unstable sort", "sglang, llamacpp",
     "Positions >= k of a descending (unstable) sort are dropped: exactly k survive.",
     "sgl-project/sglang python/sglang/srt/layers/sampler.py top_k_top_p_min_p_sampling_from_probs_torch; "
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_top_k_impl",
     true},
    {Rule::TopKFlashInfer, Stage::TopK, "by_value", "#{p_j > p_t} < k", "flashinfer-*",
     "Keep t when fewer than k ids have a strictly larger probability: ties by value stay together.",
     "flashinfer-ai/flashinfer include/flashinfer/sampling.cuh TopKSamplingFromProbKernel; "
     "flashinfer/sampling.py top_k_mask_logits",
     false},
    {Rule::TopPContract, Stage::TopP, "contract", "Running mass reaches p", "spec",
     "Walk by (logit desc, id asc); the id whose running mass first reaches p is the last kept.",
     "sampling contract section 2, step 7", false},
    {Rule::TopPAscendingCumsum, Stage::TopP, "ascending_cumsum", "Ascending cumsum <= 1 - p dropped",
     "vllm, hf", "Sort ascending, cumsum; drop cumsum <= 1 - p; the largest always stays.",
     "vllm-project/vllm vllm/v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p; huggingface/transformers "
     "src/transformers/generation/logits_process.py TopPLogitsWarper",
     true},
    {Rule::TopPAscendingCumsumStable, Stage::TopP, "ascending_cumsum_stable",
     "Ascending cumsum <= 1 - p dropped, stable sort", "vllm and hf on the CPU (variant)",
     "As ascending_cumsum, sorted stably as torch.sort is on the CPU: among equal logits the lower id sits "
     "first in the ascending order and is dropped first, so the higher ids stay.",
     "vllm-project/vllm vllm/v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p; huggingface/transformers "
     "src/transformers/generation/logits_process.py TopPLogitsWarper; torch.sort (stable on the CPU)",
     false},
    {Rule::TopPExclusivePrefix, Stage::TopP, "exclusive_prefix", "Exclusive prefix <= p kept", "sglang",
     "Sort descending, cumsum; drop (cumsum - p_i) > p: the id whose prefix equals p stays.",
     "sgl-project/sglang python/sglang/srt/layers/sampler.py top_k_top_p_min_p_sampling_from_probs_torch", true},
    {Rule::TopPExclusivePrefixStrict, Stage::TopP, "exclusive_prefix_strict", "Exclusive prefix < p kept",
     "FlashInfer's torch reference (variant)",
     "Sort descending, cumsum; keep (cumsum - p_i) < p: the id whose prefix equals p goes.",
     "flashinfer-ai/flashinfer flashinfer/trace/templates/sampling.py _top_p_renorm_probs_reference", true},
    {Rule::TopPInclusiveCumsum, Stage::TopP, "inclusive_cumsum", "Inclusive cumsum >= p stops", "llamacpp",
     "Sort descending; keep up to the first id whose inclusive cumsum is >= p.",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_top_p_apply", true},
    {Rule::TopPMassAboveByValue, Stage::TopP, "mass_above", "Mass strictly above < p", "flashinfer-*",
     "Keep t when the mass of ids with p_j > p_t is < p: tied ids stay or go together.",
     "flashinfer-ai/flashinfer include/flashinfer/sampling.cuh TopPSamplingFromProbKernel", false},
    {Rule::MinPProb, Stage::MinP, "prob", "q >= min_p x max q", "spec, vllm, sglang, hf, flashinfer-*",
     "Softmax over the ids it sees; keep q >= min_p x max q.",
     "vllm-project/vllm vllm/v1/sample/logits_processor/builtin.py MinPLogitsProcessor.apply; "
     "huggingface/transformers src/transformers/generation/logits_process.py MinPLogitsWarper",
     false},
    {Rule::MinPLog, Stage::MinP, "log", "l >= max l + log(min_p)", "llamacpp",
     "In log space: keep l >= max l + log(min_p) over the ids it sees.",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_min_p_apply", false},
    {Rule::TypicalPLlamaCpp, Stage::TypicalP, "llamacpp", "|-log q - H| ranked, mass > p", "llamacpp",
     "H = -sum q log q; sort by |-log q - H| ascending; keep up to the first id whose running mass is > p "
     "(and at least min_keep ids).",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_typical_apply", true},
    {Rule::TopNSigmaLlamaCpp, Stage::TopNSigma, "llamacpp", "l >= max - n sigma", "llamacpp",
     "Over the finite logits: max, mean and population sigma; drop l < max - n x sigma. One candidate passes.",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_top_n_sigma_apply", false},
    {Rule::DryLlamaCpp, Stage::Dry, "llamacpp", "multiplier x base^(L - allowed)", "llamacpp",
     "Over the last N tokens (prompt and output): for each earlier end of a repeat of the suffix, of length "
     "L >= allowed (cut at the latest sequence breaker), the id after it loses multiplier x base^(L - allowed), the "
     "longest L per id; single-token breakers are never penalised.",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_dry_apply", false},
    {Rule::XtcLlamaCpp, Stage::Xtc, "llamacpp", "coin < p: drop q >= t but the last", "llamacpp",
     "A coin u from its own stream (label 6); u < p: in rank order, drop the ids with q >= threshold except the "
     "last of them, when two or more qualify and at least min_keep remain.",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sample_xtc_apply", true},
    {Rule::MirostatLlamaCpp, Stage::Mirostat, "llamacpp", "v1: top k(mu); v2: -log2 q <= mu", "llamacpp",
     "v2: keep the ranked prefix with -log2 q <= mu (at least one). v1: s from the top 100 ranks' Zipf fit, "
     "k = ((s - 1) 2^mu / (1 - V^(1 - s)))^(1 / s), keep the top max(1, k). After the draw mu -= eta "
     "(-log2 q_token - tau).",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_mirostat_apply, llama_sampler_mirostat_v2_apply",
     true},
}};

constexpr const RuleInfo& rule_info(Rule rule) { return kRules[static_cast<std::size_t>(rule)]; }

// The rules a stage may follow, in table order (the first is the contract's).
std::vector<Rule> rules_for_stage(Stage stage);
std::optional<Rule> rule_from_name(Stage stage, std::string_view name);

// The stages a pipeline step may name: the ones between widening and the final softmax.
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
    std::vector<std::string> ignored_params;  // parameter keys set away from off that no step of this pipeline reads

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
};

}  // namespace samplescope
