// The preset pipelines (one per serving stack studied in docs/pipelines.md),
// their own parameter defaults, and the parser of a custom step list.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <span>
#include <string_view>
#include <vector>

#include "engine/stages/pipeline.h"

namespace samplescope {

struct PresetInfo {
    std::string_view name;      // as on the command line: --pipeline NAME
    std::string_view title;     // as in a menu
    std::string_view order;     // the order of its steps, in words
    std::string_view defaults;  // the stack's own defaults, in words
};

inline constexpr std::array<PresetInfo, 9> kPresets{{
    {"spec", "Contract (reference)", "penalties -> greedy -> T -> top-k -> top-p -> min-p",
     "the contract's: every step off, T = 1"},
    {"vllm", "vLLM V1", "repetition -> frequency/presence -> greedy -> T -> min-p -> top-k -> top-p",
     "T 1, top_p 1, top_k 0, min_p 0 (a model's generation_config.json overrides them)"},
    {"vllm-cuda", "vLLM V1 on CUDA (FlashInfer sampler)",
     "repetition -> frequency/presence -> greedy -> T -> min-p -> top-k (by value) -> top-p (renormalised)",
     "as vllm; taken on CUDA with FlashInfer unless a request has its own seed or logprobs_mode is processed_*"},
    {"sglang", "SGLang (pytorch backend)", "frequency/presence -> repetition -> greedy -> T -> top-k | top-p | min-p (joint)",
     "T 1, top_p 1, top_k all, min_p 0 (a model's generation_config.json overrides them)"},
    {"sglang-flashinfer", "SGLang (flashinfer backend)",
     "frequency/presence -> repetition -> greedy -> T -> top-k | top-p (joint; renormalised after each when min-p "
     "is on) -> min-p",
     "as sglang; the default backend where FlashInfer is installed"},
    {"hf", "HF transformers generate()", "repetition -> greedy -> T -> top-k -> top-p -> min-p",
     "top_k 50, T 1, top_p 1, min_p off; do_sample False"},
    {"llamacpp", "llama.cpp (default chain)", "logit bias -> penalties (last 64) -> DRY -> top-n-sigma -> top-k -> typical-p -> top-p -> min-p -> XTC -> T (dynamic) | mirostat: logit bias -> T -> mirostat",
     "T 0.8, top_k 40, top_p 0.95, min_p 0.05, penalty_last_n 64, repeat 1"},
    {"flashinfer-joint", "FlashInfer (joint)", "T -> top-k | top-p (joint) -> min-p", "none: the caller's"},
    {"flashinfer-topk-first", "FlashInfer (top_k_first)", "T -> top-k -> top-p (renormalised) -> min-p",
     "none: the caller's"},
}};

inline constexpr std::string_view kCustomPipelineName = "custom";

// Throws InputError (field "pipeline") naming the unknown name and the known ones.
const PresetInfo& preset_info(std::string_view name);
Pipeline preset_pipeline(std::string_view name);

// A stack's own parameter defaults, to offer ("load this engine's defaults"),
// never to apply silently. The seed is left unset.
struct EngineDefaults {
    SamplingParams params;
    std::int64_t penalty_last_n = 64;
};
EngineDefaults engine_defaults(std::string_view name);

// A custom pipeline from a comma-separated step list: each item is a stage
// name of engine/core/stage.h, optionally ":rule" (a rule name of that stage) and
// ":joint"; "penalties" stands for repetition_penalty,presence_frequency.
// Rules default to the contract's. When no greedy step is listed (and the
// temperature rule does not handle T <= 0 itself), the contract's greedy step
// is inserted after the last penalty step, so that T = 0 is never divided by.
// Throws InputError (field "stages") for an unknown stage or rule.
Pipeline custom_pipeline(std::string_view stage_list);

// The step list of a pipeline in the syntax custom_pipeline() reads
// (disabled steps left out), e.g. "repetition_penalty,top_k:keep_ties".
std::string step_list(const Pipeline& pipeline);

// What `name`'s engine would refuse in `params`, one line each, with the
// source of the check; empty for custom pipelines and engines that check
// nothing beyond the contract's own ranges.
std::vector<std::string> engine_refusals(std::string_view name, const SamplingParams& params);

// Where an engine takes the number it returns for a token, in its own
// pipeline's order: before the penalties (the model's distribution), after
// them, after temperature too, or after the whole pipeline (the final q,
// renormalised over the kept set, -inf or 0 for the ids it cut).
enum class LogprobPoint { Raw, Penalised, Scaled, Final };
// What the number is: a log probability, an unnormalised logit, or a probability.
enum class LogprobKind { Logprob, Logit, Prob };

// One of an engine's logprob modes: its own name, whether it is the engine's
// default, and what the number is. The one table of modes: traces report
// them (engine_logprobs below) and responses are read by them
// (engine/responses/).
struct LogprobModeInfo {
    std::string_view engine;  // the preset family: "vllm" (vllm, vllm-cuda), "sglang", "hf", "llamacpp"
    std::string_view mode;
    bool is_default;
    LogprobPoint point;
    LogprobKind kind;
    std::string_view meaning;  // one line
};

inline constexpr std::array<LogprobModeInfo, 11> kLogprobModes{{
    // vllm/config/model.py LogprobsMode; vllm/v1/sample/sampler.py Sampler.forward.
    {"vllm", "raw_logprobs", true, LogprobPoint::Raw, LogprobKind::Logprob,
     "log_softmax of the model's logits, before penalties and temperature"},
    {"vllm", "raw_logits", false, LogprobPoint::Raw, LogprobKind::Logit,
     "the model's logit, before penalties and temperature"},
    {"vllm", "processed_logprobs", false, LogprobPoint::Final, LogprobKind::Logprob,
     "log_softmax after penalties, temperature, min-p, top-k and top-p (the PyTorch path only)"},
    {"vllm", "processed_logits", false, LogprobPoint::Final, LogprobKind::Logit,
     "the logit after penalties and temperature, -inf where truncated (the PyTorch path only)"},
    // python/sglang/srt/layers/sampler.py Sampler.forward (return_logprob).
    {"sglang", "logprob", true, LogprobPoint::Scaled, LogprobKind::Logprob,
     "log_softmax after penalties and temperature, before top-k, top-p and min-p"},
    {"sglang", "original_logprob", false, LogprobPoint::Penalised, LogprobKind::Logprob,
     "log_softmax before temperature (SGLANG_RETURN_ORIGINAL_LOGPROB=1)"},
    // src/transformers/generation/utils.py GenerationMixin._sample.
    {"hf", "output_scores", false, LogprobPoint::Final, LogprobKind::Logit,
     "the processed score: after repetition penalty, temperature and truncation, unnormalised"},
    {"hf", "compute_transition_scores", true, LogprobPoint::Final, LogprobKind::Logprob,
     "log_softmax of the processed scores (normalize_logits=True): log q"},
    {"hf", "output_logits", false, LogprobPoint::Raw, LogprobKind::Logit, "the model's raw logit"},
    // examples/server/server.cpp (tools/server/ later) populate_token_probs: n_probs, post_sampling_probs.
    {"llamacpp", "n_probs", true, LogprobPoint::Raw, LogprobKind::Prob,
     "log of the probability from a softmax of the raw logits, before the chain"},
    {"llamacpp", "post_sampling_probs", false, LogprobPoint::Final, LogprobKind::Prob,
     "log of the probability after the whole chain (penalties, truncation, temperature)"},
}};

// The modes of pipeline `name` (its engine's rows, in table order); empty for
// spec and custom pipelines.
std::vector<const LogprobModeInfo*> logprob_modes(std::string_view name);
// A mode by its name, of any engine; null when no engine has it.
const LogprobModeInfo* find_logprob_mode(std::string_view mode);

// The token's logprob in each of the engine's logprob modes, from a trace of
// `name` on `raw_logits` (empty for spec and custom pipelines).
std::vector<EngineLogprob> engine_logprobs(std::string_view name, const SampleTrace& trace,
                                           std::span<const double> raw_logits);

// `name` is a preset, or "custom" with `stage_list`. Throws InputError.
Pipeline make_pipeline(std::string_view name, std::string_view stage_list = {});

}  // namespace samplescope
