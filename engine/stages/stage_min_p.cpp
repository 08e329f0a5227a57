// The min-p unit: keep ids whose q reaches min_p x max q, in probability space
// or, as llama.cpp, in log space. Sources: kStageRules below.
#include <algorithm>
#include <limits>
#include <string>

#include "engine/core/element_math.h"
#include "engine/core/gates.h"
#include "engine/stages/stage_unit.h"
#include "engine/stages/truncation.h"

namespace samplescope {

namespace {

TruncationOutcome decide(Rule rule, const TruncationView& view, const Values& probs) {
    TruncationOutcome out;
    const double max_prob = *std::max_element(probs.begin(), probs.end());
    out.shown.max_prob = max_prob;
    const double floor = in_arithmetic(view.arithmetic, min_p_floor(max_prob, view.params.min_p));
    out.shown.prob_floor = floor;
    if (rule == Rule::MinPProb) {
        // The contract (step 8), vLLM, HF, SGLang, FlashInfer: q < min_p x max q is dropped.
        for (std::size_t i = 0; i < probs.size(); ++i) {
            if (min_p_keeps(probs[i], floor)) out.kept.push_back(view.candidates[i]);
            if (std::fabs(probs[i] - floor) <= kNearBoundary * max_prob) out.near_boundary = true;
        }
    } else {
        // llama.cpp: min_logit = max_logit + logf(p); keep logit >= min_logit.
        double max_logit = -std::numeric_limits<double>::infinity();
        for (const auto id : view.candidates) max_logit = std::max(max_logit, view.logits[id]);
        const double min_logit =
            in_arithmetic(view.arithmetic, max_logit + in_arithmetic(view.arithmetic, std::log(view.params.min_p)));
        for (const auto id : view.candidates) {
            if (view.logits[id] >= min_logit) out.kept.push_back(id);
            if (near_threshold(view.logits[id], min_logit)) out.near_boundary = true;
        }
        // Fewer than min_keep pass: llama.cpp's sorted path keeps the top
        // min_keep in rank order instead.
        const auto min_keep = static_cast<std::size_t>(view.params.min_keep);
        if (out.kept.size() < min_keep) {
            const Ranked ranked = ranked_candidates(view);
            const std::size_t count = std::min(min_keep, ranked.ids.size());
            keep_prefix(ranked, count, out, false);
            out.tie_at_boundary = tie_across(view, ranked, count);
            out.note = "fewer than min_keep = " + std::to_string(min_keep) + " pass: the top " +
                       std::to_string(count) + " stay";
        }
    }
    return out;
}

bool gate(const SamplingParams& p, std::size_t) { return gate_min_p(p.min_p); }

bool min_p(RowState& row, const PipelineStep& step, StepReport& report, StageTrace& shown) {
    if (!gate(row.params, row.vocab)) return false;
    const TruncationView view = view_of(row);
    // q over the candidates: the row's own cache when they are the kept set.
    Values joint_probs;
    if (row.joint()) softmax_over_ids(view.logits, view.candidates, joint_probs, row.arithmetic);
    const Values& probs = row.joint() ? joint_probs : row.kept_probs();
    apply_outcome(row, decide(step.rule, view, probs), report, shown);
    return true;
}

constexpr Param kReads[] = {Param::MinP, Param::MinKeep};

// Only llama.cpp's rule has a min_keep.
bool rule_reads(Rule rule, Param param) { return param != Param::MinKeep || rule == Rule::MinPLog; }

constexpr StageUnit kUnit{kReads, listens_always, min_p, rule_reads};

constexpr ParamInfo kStageParams[] = {
    {.param = Param::MinP, .key = "min_p", .label = "Min-p", .default_value = 0.0, .slider_min = 0.0,
     .slider_max = 1.0, .formula = "Keep ids with q >= min_p x max q over the kept set. Off at 0.",
     .valid_range = "in [0, 1]", .real = &SamplingParams::min_p, .min = 0.0, .max = 1.0, .contract = true,
     .role = ParamRole::Switch, .on = gate},
};

constexpr RuleInfo kStageRules[] = {
    {Rule::MinPProb, Stage::MinP, "prob", "q >= min_p x max q", "spec, vllm, sglang, hf, flashinfer-*",
     "Softmax over the ids it sees; keep q >= min_p x max q.",
     "vllm-project/vllm vllm/v1/sample/logits_processor/builtin.py MinPLogitsProcessor.apply; "
     "huggingface/transformers src/transformers/generation/logits_process.py MinPLogitsWarper",
     false},
    {Rule::MinPLog, Stage::MinP, "log", "l >= max l + log(min_p)", "llamacpp",
     "In log space: keep l >= max l + log(min_p) over the ids it sees.",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_min_p_apply", false},
};

}  // namespace

extern const StageDescriptor stage_min_p_descriptor;
constinit const StageDescriptor stage_min_p_descriptor{
    .stage = Stage::MinP,
    .name = "min_p",
    .title = "Min-p",
    .summary = "Keep ids with q >= min_p x max q over the kept set.",
    .truncates = true,
    .contract = true,
    .mark = PlotMark::ProbFloor,
    .params = kStageParams,
    .rules = kStageRules,
    .gate = gate,
    .off_reason = [](const SamplingParams& p, std::size_t) {
        return off_because("min_p = " + format_number(p.min_p), "off at 0", true);
    },
    .unit = &kUnit,
};

}  // namespace samplescope
