// The top-k unit: keep the k best, with each stack's rule for a tie at the
// k-th value. Sources: kStageRules below.
#include <algorithm>
#include <cstdint>
#include <string>

#include "engine/base/number_text.h"
#include "engine/core/gates.h"
#include "engine/stages/stage_unit.h"
#include "engine/stages/truncation.h"

namespace samplescope {

namespace {

bool near_kth(double kth, double next) { return std::fabs(kth - next) <= kNearBoundary * std::max(1.0, std::fabs(kth)); }

// The contract (step 6): the first k by (logit desc, id asc), selected without
// ranking the rest of the row.
void contract(RowState& row, std::size_t k_wanted, StepReport& report, StageTrace& shown) {
    const std::size_t n = row.kept().size();
    const std::size_t k = std::min(k_wanted, n);
    const IdList& ranked = row.ranked(k < n ? k + 1 : k);
    const Values& logits = row.logits();
    const double kth = logits[ranked[k - 1]];
    shown.kth_logit = kth;
    if (k < n) report.near_boundary = near_kth(kth, logits[ranked[k]]);
    row.keep_ranked_prefix(k);
}

TruncationOutcome stack_rule(Rule rule, const TruncationView& view) {
    TruncationOutcome out;
    const std::size_t n = view.candidates.size();
    const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(view.params.top_k), n);
    // The exact and keep-ties rules read the first k + 1 ranks only;
    // FlashInfer's walks the runs of equal q past the k-th.
    const Ranked ranked = ranked_candidates(view, rule == Rule::TopKFlashInfer ? n : k + 1);
    const double kth = view.logits[ranked.ids[k - 1]];
    out.shown.kth_logit = kth;
    if (k < n) out.near_boundary = near_kth(kth, view.logits[ranked.ids[k]]);
    switch (rule) {
        case Rule::TopKContract:
            keep_prefix(ranked, k, out, false);
            break;
        case Rule::TopKExactUnstable:
            // SGLang torch: positions >= k of a descending sort are zeroed;
            // llama.cpp: partial_sort then size = k. Exactly k either way.
            keep_prefix(ranked, k, out, false);
            out.tie_at_boundary = tie_across(view, ranked, k);
            break;
        case Rule::TopKKeepTies:
            // vLLM: logits_sort < (k-th value) are masked; HF: scores < topk(...)[-1].
            for (const auto id : view.candidates) {
                if (!(view.logits[id] < kth)) out.kept.push_back(id);
            }
            break;
        case Rule::TopKFlashInfer: {
            // FlashInfer: t survives when #{j : p_j > p_t} < k, counted on
            // probabilities, so ties by value stay together. In rank order q is
            // non-increasing, so the count is the start of t's run of equal q.
            std::size_t run_start = 0;
            for (std::size_t i = 0; i < n; ++i) {
                if (i > 0 && ranked.probs[i] != ranked.probs[i - 1]) run_start = i;
                if (run_start < k) out.kept.push_back(ranked.ids[i]);
            }
            std::sort(out.kept.begin(), out.kept.end());
            break;
        }
        default: break;
    }
    return out;
}

// Off at 0 or k >= V.
bool gate(const SamplingParams& p, std::size_t vocab) {
    return vocab <= static_cast<std::size_t>(INT64_MAX) && gate_top_k(p.top_k, static_cast<std::int64_t>(vocab));
}

bool top_k(RowState& row, const PipelineStep& step, StepReport& report, StageTrace& shown) {
    if (!gate(row.params, row.vocab)) return false;
    if (step.rule == Rule::TopKContract && !row.joint()) {
        contract(row, static_cast<std::size_t>(row.params.top_k), report, shown);
    } else {
        apply_outcome(row, stack_rule(step.rule, view_of(row)), report, shown);
    }
    return true;
}

constexpr Param kReads[] = {Param::TopK};
constexpr StageUnit kUnit{kReads, listens_always, top_k};

constexpr ParamInfo kStageParams[] = {
    {.param = Param::TopK, .key = "top_k", .label = "Top-k", .default_value = 0.0, .slider_min = 0.0,
     .slider_max = 200.0, .formula = "Keep the k largest logits (ties to the lower id). Off at 0 or k >= V.",
     .valid_range = "an integer >= 0", .whole = &SamplingParams::top_k, .min = 0.0, .contract = true,
     .role = ParamRole::Switch, .on = gate, .blocked = "off (>= V)"},
};

constexpr RuleInfo kStageRules[] = {
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
};

}  // namespace

extern const StageDescriptor stage_top_k_descriptor;
constinit const StageDescriptor stage_top_k_descriptor{
    .stage = Stage::TopK,
    .name = "top_k",
    .title = "Top-k",
    .summary = "Keep the k best by (logit desc, id asc).",
    .truncates = true,
    .contract = true,
    .mark = PlotMark::KthLogit,
    .params = kStageParams,
    .rules = kStageRules,
    .gate = gate,
    .off_reason = [](const SamplingParams& p, std::size_t vocab) {
        return off_because("top_k = " + std::to_string(p.top_k), "off at 0 or k >= V = " + format_count(vocab), true);
    },
    .unit = &kUnit,
};

}  // namespace samplescope
