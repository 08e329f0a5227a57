// Speculative decoding on two models (Leviathan et al. 2023, "Fast Inference
// from Transformers via Speculative Decoding"; Chen et al. 2023, "Accelerating
// Large Language Model Decoding with Speculative Sampling"): a cheaper draft
// proposes k tokens from its processed distribution q, the target scores the
// k + 1 positions at once, and each draft token x is accepted with probability
// min(1, p(x) / q(x)) against the target's processed distribution p; the
// first rejection draws from normalize(max(0, p - q)); when all k are
// accepted a bonus token is drawn from the last position's p. The emitted
// tokens then follow the target's distribution exactly.
//
// Both models' rows go through the same pipeline and parameters, each with
// the history its position would have (the prompt, the text so far and the
// draft tokens before it), and each enters as the pipeline's exact final
// distribution (pipeline_runner.h exact_distribution: with an XTC coin, the
// mixture of its two outcomes, so no coin of label 6 is taken). Mirostat is
// refused: its mu moves with the surprise of each token drawn from its own
// distribution, which a draft proposal accepted against p is not.
//
// The uniforms come from the request's one stream (label 4) in the order
// docs/contract.md fixes for the contract's rules; the engine presets take
// them in their engines' own order (kSpecRules below, docs/speculative.md).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/generator.h"
#include "engine/models/language_model.h"
#include "engine/pipelines/pipeline_runner.h"
#include "engine/stages/pipeline.h"

namespace samplescope {

// Every rule a speculative preset follows, by aspect; the table names the
// presets that use each and the source it was read in.
enum class SpecRule : int {
    // The acceptance test of a draft token x: p = p(x), q = q(x), a uniform u.
    AcceptContract,
    AcceptVllm,
    AcceptFlashInfer,
    // The residual a rejection draws from, and how.
    ResidualContract,
    ResidualVllm,
    ResidualFlashInfer,
    // Rows whose pipeline is greedy (no draw).
    GreedyContract,
    GreedyVllm,
    GreedyFlashInfer,
    // Which uniforms a round takes from the request's stream, in which order.
    DrawsContract,
    DrawsVllm,
    DrawsFlashInfer,
    // What the engine checks of its inputs before it verifies.
    ChecksContract,
    ChecksVllm,
    ChecksFlashInfer,
};

struct SpecRuleInfo {
    SpecRule rule;
    std::string_view aspect;    // "accept", "residual", "greedy", "draws", "checks"
    std::string_view name;      // machine name: aspect:name
    std::string_view presets;   // which presets use it
    std::string_view summary;   // the rule, literally
    std::string_view citation;  // repository, file, function
};

inline constexpr std::array<SpecRuleInfo, 15> kSpecRules{{
    {SpecRule::AcceptContract, "accept", "contract", "spec",
     "Accept x when u < min(1, p / q). A draft token with q = 0 cannot have been proposed from q; given one (a "
     "diff on supplied tokens) it is rejected.",
     "Leviathan et al. 2023, Algorithm 1; docs/contract.md \"Speculative decoding\""},
    {SpecRule::AcceptVllm, "accept", "vllm", "vllm",
     "Accept x when q > 0 and p / q >= u (u a float64 uniform): u = p / q exactly is accepted, so p = 0 with u = 0 "
     "accepts a token the target cannot produce; q = 0 is rejected.",
     "vllm-project/vllm vllm/v1/sample/rejection_sampler.py rejection_random_sample_kernel, generate_uniform_probs "
     "(float64 to make u = 0 rare)"},
    {SpecRule::AcceptFlashInfer, "accept", "flashinfer", "flashinfer",
     "Accept x when u q < p (no division): q = 0 accepts any x with p > 0.",
     "flashinfer-ai/flashinfer include/flashinfer/sampling.cuh ChainSpeculativeSampling (its q is the target's "
     "probability, its p the draft's)"},
    {SpecRule::ResidualContract, "residual", "contract", "spec",
     "normalize(max(0, p - q)) over the union of both kept sets (sums in ascending id order), drawn by the contract's "
     "inverse CDF with one uniform; an empty residual (p = q, reached only by rounding) draws from p.",
     "Leviathan et al. 2023, Algorithm 1; docs/contract.md \"Speculative decoding\""},
    {SpecRule::ResidualVllm, "residual", "vllm", "vllm",
     "max(0, p - q) unnormalised, recovered as argmax(r / E) with E ~ Exp(1), one E vector per request shared by "
     "the round's positions (an exact draw from normalize(r)); modelled as one uniform per round through the "
     "inverse CDF. An empty residual gives id 0 (argmax of zeros).",
     "vllm-project/vllm vllm/v1/sample/rejection_sampler.py sample_recovered_tokens, "
     "sample_recovered_tokens_kernel"},
    {SpecRule::ResidualFlashInfer, "residual", "flashinfer", "flashinfer",
     "relu(p - q) unnormalised: the threshold u x sum, the first id in ascending order among those with r > 0 "
     "whose running sum passes it, else the last such id; the bonus position uses p itself (no draft row). An "
     "empty residual leaves the kernel's initial id (d - 1, the last id).",
     "flashinfer-ai/flashinfer include/flashinfer/sampling.cuh ChainSpeculativeSampling, DeviceSamplingFromProb"},
    {SpecRule::GreedyContract, "greedy", "contract", "spec",
     "A greedy row takes no uniform: the draft proposes its argmax; x is accepted iff it is the target's argmax; a "
     "rejection emits the target's argmax (max(0, p - q) is one-hot there).",
     "docs/contract.md \"Speculative decoding\" (one uniform per sampled token, none per greedy one)"},
    {SpecRule::GreedyVllm, "greedy", "vllm", "vllm",
     "A greedy request (temperature 0) skips the random path: accept while x equals argmax p, emit argmax p at the "
     "first mismatch, then the bonus argmax; no uniform, no recovered token.",
     "vllm-project/vllm vllm/v1/sample/rejection_sampler.py rejection_sample, rejection_greedy_sample_kernel"},
    {SpecRule::GreedyFlashInfer, "greedy", "flashinfer", "flashinfer",
     "No greedy path: one-hot rows go through the same test (u x 1 < p(x) accepts iff x is the argmax) and relu(p - "
     "q) is one-hot; its uniform_samples are still consumed.",
     "flashinfer-ai/flashinfer include/flashinfer/sampling.cuh ChainSpeculativeSampling"},
    {SpecRule::DrawsContract, "draws", "contract", "spec",
     "Per round: the draft's draws (one per sampled draft position, in order), then one acceptance uniform per "
     "position tested (stopping after the first rejection), then one for the residual or the bonus token.",
     "docs/contract.md \"Speculative decoding\""},
    {SpecRule::DrawsVllm, "draws", "vllm", "vllm",
     "Per round: the draft's draws, then the bonus token (sampled by the regular sampler before the rejection "
     "sampler runs), then k acceptance uniforms (all k, whatever is rejected), then the recovered tokens' noise "
     "(once per round): 2k + 2 uniforms for a sampled round.",
     "vllm-project/vllm vllm/v1/sample/rejection_sampler.py RejectionSampler.forward (bonus first), "
     "generate_uniform_probs, sample_recovered_tokens (one generator per seeded request)"},
    {SpecRule::DrawsFlashInfer, "draws", "flashinfer", "flashinfer",
     "Per round: the draft's draws, then its uniform_samples input of k + 1: u[i] tests position i (all k are "
     "tested, for the accepted-token count), the residual or bonus takes u[min(pos + 1, k)] after a rejection at "
     "pos (u[k] when all are accepted).",
     "flashinfer-ai/flashinfer include/flashinfer/sampling.cuh ChainSpeculativeSampling (uniform_samples of shape "
     "(batch, k + 1); later releases draw the same k + 1 from a Philox seed and offset); flashinfer/sampling.py "
     "chain_speculative_sampling"},
    {SpecRule::ChecksContract, "checks", "contract", "spec",
     "The draft and the target share one vocabulary (size and labels); every row passes the contract's checks.",
     "docs/contract.md section 3"},
    {SpecRule::ChecksVllm, "checks", "vllm", "vllm",
     "Strict mode: shapes, dtypes, devices and every draft and target id inside [0, V) are asserted before "
     "sampling; off by default (it adds latency). The model here always checks (strict mode on).",
     "vllm-project/vllm vllm/model_executor/layers/spec_decode_base_sampler.py "
     "SpecDecodeBaseSampler._raise_if_incorrect_input (strict_mode)"},
    {SpecRule::ChecksFlashInfer, "checks", "flashinfer", "flashinfer",
     "Shapes only: draft_probs (batch, k, V), draft_token_ids (batch, k), target_probs (batch, k + 1, V); ids "
     "are not range-checked by the kernel. The model here checks them.",
     "flashinfer-ai/flashinfer flashinfer/sampling.py chain_speculative_sampling"},
}};

constexpr const SpecRuleInfo& spec_rule_info(SpecRule rule) { return kSpecRules[static_cast<std::size_t>(rule)]; }

// A preset: one rule per aspect.
struct SpecPreset {
    std::string_view name;   // --rules NAME
    std::string_view title;
    SpecRule accept, residual, greedy, draws, checks;
};

inline constexpr std::array<SpecPreset, 3> kSpecPresets{{
    {"spec", "Contract (Leviathan et al. 2023)", SpecRule::AcceptContract, SpecRule::ResidualContract,
     SpecRule::GreedyContract, SpecRule::DrawsContract, SpecRule::ChecksContract},
    {"vllm", "vLLM V1 rejection sampler", SpecRule::AcceptVllm, SpecRule::ResidualVllm, SpecRule::GreedyVllm,
     SpecRule::DrawsVllm, SpecRule::ChecksVllm},
    {"flashinfer", "FlashInfer chain_speculative_sampling", SpecRule::AcceptFlashInfer, SpecRule::ResidualFlashInfer,
     SpecRule::GreedyFlashInfer, SpecRule::DrawsFlashInfer, SpecRule::ChecksFlashInfer},
}};

// Throws InputError(field) naming the unknown name and the presets there are.
const SpecPreset& spec_preset(std::string_view name, const std::string& field = "rules");

// One position's distribution as a step of the pipeline would draw from it.
using SpecRow = ExactDistribution;

// The probability of `id` in a row (0 when it is not kept).
double row_prob(const SpecRow& row, std::int32_t id);
// sum_i min(p_i, q_i) over the union of both kept sets, in ascending id order:
// the probability that a draft token drawn from q is accepted against p.
double overlap(const SpecRow& p, const SpecRow& q);
// max(0, p - q) over the union of both kept sets, ascending, zeros left out
// (unnormalised).
void positive_difference(const SpecRow& p, const SpecRow& q, IdList& ids, Values& mass);

// Builds the residual a rejection draws from, normalised: what the test of
// exactness replaces with a wrong one to show that the check can fail.
using ResidualBuilder = std::function<void(const SpecRow& p, const SpecRow& q, IdList& ids, Values& probs)>;
// normalize(max(0, p - q)); p itself when that is empty.
void contract_residual(const SpecRow& p, const SpecRow& q, IdList& ids, Values& probs);

// A round to verify: k draft rows and tokens, k + 1 target rows.
struct SpecRoundInput {
    std::size_t vocab = 0;                 // V of both models
    std::vector<SpecRow> draft;            // q_0 .. q_{k-1}
    std::vector<std::int32_t> draft_tokens;  // x_0 .. x_{k-1}
    std::vector<SpecRow> target;           // p_0 .. p_k
};

// One draft position as the verification saw it.
struct SpecPosition {
    std::int32_t token = 0;       // x_i
    double q = 0.0;               // q_i(x_i)
    double p = 0.0;               // p_i(x_i)
    double acceptance = 0.0;      // min(1, p / q) (0 when q = 0)
    double overlap = 0.0;         // sum min(p_i, q_i): this position's expected acceptance
    std::optional<double> u;      // the acceptance uniform; none for a greedy row or one never tested
    bool tested = false;          // the chain reached it (the engine may test later ones too, for its counts)
    bool accepted = false;
};

// Where the round's last token came from.
struct SpecFinal {
    bool bonus = false;           // all k accepted: drawn from p_k
    std::size_t position = 0;     // the position it stands at (the rejected one, or k)
    IdList ids;                   // the distribution it was drawn from: the residual's kept set, or p_k's
    Values probs;
    std::optional<double> u;      // none when greedy
    std::int32_t token = 0;
    bool fell_back = false;       // the inverse CDF's fallback (rounding)
    bool empty_residual = false;  // max(0, p - q) was empty (the preset's own rule chose)
};

struct SpecVerification {
    std::vector<SpecPosition> positions;  // k
    SpecFinal final;
    std::vector<std::int32_t> emitted;    // the accepted draft tokens, then the final token
    std::size_t accepted = 0;             // draft tokens emitted
    std::size_t tested = 0;               // positions the chain tested (accepted + 1 rejection, or k)
    std::uint64_t uniforms = 0;           // uniforms the verification took (the draft's not counted)
    std::optional<double> bonus_u;        // vllm: the bonus token's uniform, taken first even when not used
};

// A source of uniforms in [0, 1): the request's stream, or a fixed list (a
// diff on given uniforms, an engine's documented example).
using UniformSource = std::function<double()>;

// Verifies one round under a preset. Throws InputError for rows of other
// sizes, a draft token outside [0, V) or k + 1 target rows missing.
SpecVerification verify_round(const SpecPreset& preset, const SpecRoundInput& input, const UniformSource& uniform,
                              const ResidualBuilder& residual = {});

// The same on k + 1 given uniforms laid out as FlashInfer's uniform_samples:
// position i is tested with u[i] by every preset; the final draw takes u[k]
// (FlashInfer: u[min(pos + 1, k)]). No draw order is involved: what differs
// between two presets here is their rules alone. Throws InputError as
// verify_round does, or for a count other than k + 1.
SpecVerification verify_round_aligned(const SpecPreset& preset, const SpecRoundInput& input,
                                      std::span<const double> uniforms);

// Two presets on the same round and the same uniforms (verify_round_aligned): (each takes them in its
// own order): where their accepted tokens, residuals or emitted tokens differ,
// one line each.
struct SpecRoundDiff {
    SpecVerification a;
    SpecVerification b;
    bool same_emitted = true;
    std::vector<std::string> differences;
};
SpecRoundDiff diff_round(const SpecPreset& a, const SpecPreset& b, const SpecRoundInput& input,
                         std::span<const double> uniforms);

// ---- The loop on two models ----

struct SpeculativeOptions {
    std::size_t k = 4;                  // draft tokens per round
    const SpecPreset* preset = nullptr;  // the contract's when null
    bool stop_at_end = true;            // stop at the model's end of text
    std::uint64_t max_tokens = 0;       // tokens to emit in all (0: no bound); a round never passes it
    ResidualBuilder residual;           // tests only: a residual to use instead of the preset's
};
inline constexpr std::size_t kMaxSpeculativeK = 32;

struct SpeculativeRound {
    std::size_t index = 0;          // 0-based
    std::size_t k = 0;              // draft tokens proposed (fewer than asked near the end)
    SpecRoundInput rows;            // the distributions: draft q_i, target p_i
    std::vector<std::optional<double>> draft_u;  // the draft's uniform per position (none when greedy)
    SpecVerification verification;
    std::vector<std::int32_t> emitted;  // as appended (cut after the end of text)
    bool ended = false;
    std::uint64_t draws_before = 0;
    std::uint64_t draws_after = 0;
};

// Where a speculation stands: the emitted ids, the uniforms taken and the
// acceptance counts so far.
struct SpeculativeStats {
    std::uint64_t rounds = 0;
    std::uint64_t tested = 0;
    std::uint64_t accepted = 0;
    double expected = 0.0;           // sum over tested positions of overlap(p, q)
    double expected_variance = 0.0;  // sum of overlap (1 - overlap): the count's variance
    double rate() const { return tested ? static_cast<double>(accepted) / static_cast<double>(tested) : 0.0; }
    double expected_rate() const { return tested ? expected / static_cast<double>(tested) : 0.0; }
    // The rate's standard error under the expectation, sqrt(sum alpha (1 - alpha)) / n, and
    // z = (accepted - sum alpha) / sqrt(sum alpha (1 - alpha)); 0 where undefined.
    double standard_error() const;
    double z() const;
};

class Speculation {
public:
    // Throws InputError for bad parameters or pipeline, mirostat on, k outside
    // [1, kMaxSpeculativeK], models of different vocabularies, a prompt id
    // outside [0, V).
    Speculation(std::shared_ptr<const LanguageModel> target, std::shared_ptr<const LanguageModel> draft,
                Pipeline pipeline, SamplingParams params, std::vector<PromptWord> prompt, SpeculativeOptions options);

    // Proposes, verifies and appends one round. Throws InputError (and changes
    // nothing) when the text has ended, the bound is reached or a model has no row.
    SpeculativeRound round();

    bool ended() const;        // the end of text was emitted (with stop_at_end)
    bool exhausted() const;    // max_tokens emitted
    std::uint64_t seed() const { return seed_; }
    std::uint64_t draws_consumed() const { return draws_; }
    const SpeculativeStats& stats() const { return stats_; }
    const SpecPreset& preset() const { return *options_.preset; }
    const SamplingParams& params() const { return params_; }
    const Pipeline& pipeline() const { return pipeline_; }
    const LanguageModel& target() const { return *target_; }
    const LanguageModel& draft() const { return *draft_; }
    const std::vector<PromptWord>& prompt() const { return prompt_; }
    std::span<const std::int64_t> generated() const { return std::span(context_).subspan(prompt_.size()); }
    std::string text() const;
    std::string generated_text() const;

private:
    SpecRow row_at(const LanguageModel& model, std::span<const std::int64_t> context, std::vector<double>& scratch) const;

    std::shared_ptr<const LanguageModel> target_;
    std::shared_ptr<const LanguageModel> draft_;
    Pipeline pipeline_;
    SamplingParams params_;
    std::vector<PromptWord> prompt_;
    std::vector<std::int64_t> prompt_ids_;  // the known ones: what the penalties read
    SpeculativeOptions options_;
    std::uint64_t seed_ = 0;
    Pcg32 rng_;
    std::uint64_t draws_ = 0;
    std::vector<std::int64_t> context_;
    SpeculativeStats stats_;
};

// Throws InputError("draft") when the two models' vocabularies differ (size, or a label).
void check_same_vocabulary(const LanguageModel& target, const LanguageModel& draft);

}  // namespace samplescope
