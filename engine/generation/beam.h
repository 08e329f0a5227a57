// Beam search on a model, as Hugging Face transformers and vLLM define it:
// width w; each step extends the beams by their best next tokens (log
// probabilities summed along the beam), keeps the w best unfinished ones, and
// sets finished hypotheses (ending in the model's end of text) aside, scored
// with the length penalty score = logprob / length^alpha. The two engines
// differ in which candidates they take, which finished ones they keep, the
// length the penalty divides by, which log-probabilities they sum and when
// they stop; kBeamRules names each rule and where it was read, and
// BeamRules chooses the set (docs/beam.md).
//
// Beam search draws nothing: it is deterministic, and takes no seed. Ties in
// a ranking are broken by the lower beam index, then the lower token id
// (torch.topk leaves the order of equal values unspecified).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/models/language_model.h"

namespace samplescope {

enum class BeamRules { Hf, Vllm };

// HF's generation_config.early_stopping (vLLM has none: it runs every step).
enum class EarlyStopping { False, True, Never };

struct BeamRuleInfo {
    BeamRules rules;
    std::string_view aspect;    // "logprobs", "candidates", "finished", "length", "stop", "result"
    std::string_view summary;   // the rule, literally
    std::string_view citation;  // repository, file, function
};

inline constexpr std::array<BeamRuleInfo, 12> kBeamRules{{
    {BeamRules::Hf, "logprobs",
     "log_softmax of the model's logits, then the logits processors on those log-probabilities (here the "
     "repetition penalty over the prompt and the beam's tokens: s < 0 ? s x r : s / r); the processed scores are "
     "summed. Temperature, top-k and top-p are sampling warpers, not applied without do_sample.",
     "huggingface/transformers src/transformers/generation/utils.py GenerationMixin._beam_search (step b); "
     "logits_process.py RepetitionPenaltyLogitsProcessor"},
    {BeamRules::Vllm, "logprobs",
     "The raw log_softmax of the model's logits (the default logprobs_mode raw_logprobs, taken before penalties "
     "and temperature); beam search passes no penalty.",
     "vllm-project/vllm vllm/v1/sample/sampler.py Sampler.forward (raw_logprobs), vllm/entrypoints/llm.py "
     "LLM.beam_search (SamplingParams(logprobs=2 * beam_width, max_tokens=1, temperature))"},
    {BeamRules::Hf, "candidates",
     "The best 2w of all (beam, token) pairs by summed score, over every beam at once (K = max(2, 1 + EOS "
     "tokens) x w); the first step extends the prompt alone.",
     "huggingface/transformers src/transformers/generation/utils.py _get_top_k_continuations, _beam_search "
     "(beams_to_keep; running_beam_scores[:, 1:] = -1e9)"},
    {BeamRules::Vllm, "candidates",
     "Each beam's own 2w best next tokens (its top logprobs), so w x 2w candidates; the w best unfinished by the "
     "length-penalised score continue.",
     "vllm-project/vllm vllm/entrypoints/llm.py LLM.beam_search"},
    {BeamRules::Hf, "finished",
     "A candidate ending in EOS (or reaching the length limit) is a hypothesis only when it ranks among the first "
     "w of the 2w; the finished set keeps the w best scores. With early_stopping True nothing more is added once "
     "w are finished.",
     "huggingface/transformers src/transformers/generation/utils.py _update_finished_beams (top_num_beam_mask)"},
    {BeamRules::Vllm, "finished",
     "Every candidate ending in EOS, from any beam's 2w, joins the completed list, which is never cut (unless "
     "ignore_eos, when EOS continues like any token).",
     "vllm-project/vllm vllm/entrypoints/llm.py LLM.beam_search (instance.completed)"},
    {BeamRules::Hf, "length",
     "score = logprob / L^alpha with L the generated tokens, the EOS included (cur_len + 1 - prompt length).",
     "huggingface/transformers src/transformers/generation/utils.py _update_finished_beams"},
    {BeamRules::Vllm, "length",
     "score = logprob / L^alpha with L = len(tokens): the prompt's tokens and the generated ones, less one when "
     "the last is EOS.",
     "vllm-project/vllm vllm/beam_search.py get_beam_search_score"},
    {BeamRules::Hf, "stop",
     "early_stopping True: stop when w hypotheses are finished. False: stop when the best running beam, scored "
     "at its current length, cannot beat the worst finished one. \"never\": the same with the length limit as "
     "L when alpha > 0. Always at the length limit.",
     "huggingface/transformers src/transformers/generation/utils.py _check_early_stop_heuristic, "
     "_beam_search_has_unfinished_sequences"},
    {BeamRules::Vllm, "stop",
     "No early stopping: max_tokens steps, or until no beam is left.",
     "vllm-project/vllm vllm/entrypoints/llm.py LLM.beam_search"},
    {BeamRules::Hf, "result",
     "The finished set, best score first; at the length limit the first w candidates are finished there. Beams "
     "still running when the search stops early are dropped.",
     "huggingface/transformers src/transformers/generation/utils.py _beam_search (step 5)"},
    {BeamRules::Vllm, "result",
     "The completed list and the running beams together, by score (running beams at their own length), the "
     "best w.",
     "vllm-project/vllm vllm/entrypoints/llm.py LLM.beam_search"},
}};

struct BeamOptions {
    std::size_t width = 4;
    std::size_t steps = 10;            // new tokens at most (HF's max_new_tokens, vLLM's max_tokens)
    double length_penalty = 1.0;       // alpha
    EarlyStopping early_stopping = EarlyStopping::False;  // HF only
    BeamRules rules = BeamRules::Hf;
    bool ignore_eos = false;           // the end of text continues like any token
    double repetition_penalty = 1.0;   // HF only (a logits processor on the log-probabilities)
};
inline constexpr std::size_t kMaxBeamWidth = 64;
inline constexpr std::size_t kMaxBeamSteps = 1000;

// BeamRules by name ("hf", "vllm"), EarlyStopping by HF's spelling ("true",
// "false", "never"); both throw InputError(field) naming the text.
BeamRules parse_beam_rules(std::string_view text, const std::string& field);
std::string_view beam_rules_name(BeamRules rules);
EarlyStopping parse_early_stopping(std::string_view text, const std::string& field);
// alpha as typed: a finite number, else InputError("length_penalty") naming the text.
double parse_length_penalty(std::string_view text);
std::string_view early_stopping_name(EarlyStopping value);

struct Beam {
    std::vector<std::int64_t> tokens;  // generated so far
    double logprob = 0.0;              // summed scores
};

enum class CandidateFate {
    Kept,          // a beam of the next step
    Finished,      // a hypothesis (it may be displaced later)
    NotFinished,   // ended, but HF did not take it (ranked past w, or the set is closed)
    Pruned,        // not among the w best
};
std::string_view candidate_fate_name(CandidateFate fate);

struct BeamCandidate {
    std::size_t beam = 0;        // the beam it extends (index into BeamStep::beams)
    std::int64_t token = 0;
    double token_logprob = 0.0;  // the score this token adds
    double logprob = 0.0;        // the beam's plus the token's
    double score = 0.0;          // length-penalised (finished: the hypothesis's; vLLM: its sort key)
    std::size_t rank = 0;        // HF: among the 2w over all beams; vLLM: within its beam
    bool ends = false;           // ends a hypothesis here (EOS, or HF's length limit)
    CandidateFate fate = CandidateFate::Pruned;
};

struct BeamHypothesis {
    std::vector<std::int64_t> tokens;
    double logprob = 0.0;
    double score = 0.0;
    std::size_t length = 0;    // what the penalty divided by
    std::size_t step = 0;      // the step it finished at
    bool finished = true;      // false: a running beam taken into vLLM's result
};

struct BeamStep {
    std::size_t step = 0;                  // 1-based: the new token's index
    std::vector<Beam> beams;               // extended at this step
    std::vector<BeamCandidate> candidates;  // in rank order (vLLM: by beam, then rank)
    std::vector<Beam> kept;                // the beams of the next step
    std::vector<BeamHypothesis> finished;  // the finished set after this step (vLLM: completed so far)
    // HF's test whether the running beams can still improve (after this step).
    std::optional<double> best_possible;   // the best running beam's score at its hypothetical length
    std::optional<double> worst_finished;  // the worst of w finished hypotheses
    bool done = false;
    std::string stop_reason;               // when done: why
};

class BeamSearch {
public:
    // Throws InputError for a width or step count out of range, a length
    // penalty that is not finite, early_stopping or a repetition penalty with
    // the vLLM rules, a repetition penalty <= 0, a prompt id outside [0, V).
    BeamSearch(std::shared_ptr<const LanguageModel> model, std::vector<PromptWord> prompt, BeamOptions options);

    // One step. Throws InputError when the search is done or the model has no row.
    BeamStep step();
    bool done() const { return done_; }
    // The hypotheses, best score first (at most w).
    std::vector<BeamHypothesis> result() const;

    const BeamOptions& options() const { return options_; }
    const LanguageModel& model() const { return *model_; }
    const std::vector<PromptWord>& prompt() const { return prompt_; }
    std::size_t steps_taken() const { return step_; }
    // The score divided by L^alpha for a hypothesis of `generated` tokens (ending in EOS or not).
    double length_of(std::size_t generated, bool ends_in_eos) const;

private:
    // The per-token scores of a beam's next position (log_softmax, processed).
    void scores_for(const Beam& beam, std::vector<double>& scores);

    std::shared_ptr<const LanguageModel> model_;
    std::vector<PromptWord> prompt_;
    std::vector<std::int64_t> prompt_ids_;  // known ids (what the penalty reads)
    BeamOptions options_;
    std::optional<std::int64_t> eos_;
    std::vector<Beam> beams_;
    std::vector<BeamHypothesis> finished_;
    bool improvable_ = true;   // HF's is_early_stop_heuristic_unsatisfied
    bool done_ = false;
    std::size_t step_ = 0;
    std::vector<double> row_;
};

}  // namespace samplescope
