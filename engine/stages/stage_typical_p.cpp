// The typical-p unit: locally typical sampling as llama.cpp defines it
// (ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_typical_apply). Over
// the candidates' softmax q it takes the entropy H = -sum q log q, scores each
// id by |-log q - H| (how far its surprise is from the expected surprise),
// walks the ids from the smallest score up adding their q, and stops at the
// first id whose running mass is strictly greater than p once at least
// min_keep ids are taken (all stay when the mass never passes p). Off at
// p >= 1. llama.cpp sorts the scores with an unstable sort; equal scores are
// walked here in rank order (logit desc, id asc) and a tie across the cut is
// flagged. An id whose q underflowed to 0 adds 0 to H (0 log 0 = 0) and is
// the least typical (score +inf).
#include <algorithm>
#include <numeric>

#include "engine/core/gates.h"
#include "engine/stages/stage_unit.h"
#include "engine/stages/truncation.h"

namespace samplescope {

namespace {

TruncationOutcome decide(const TruncationView& view, std::size_t min_keep) {
    TruncationOutcome out;
    const Ranked ranked = ranked_candidates(view);
    const std::size_t n = ranked.ids.size();
    const double p = view.params.typical_p;
    const auto r = [&view](double x) { return in_arithmetic(view.arithmetic, x); };
    double entropy = 0.0;
    for (const double q : ranked.probs) {
        if (q > 0.0) entropy = r(entropy - r(q * r(std::log(q))));
    }
    Values score(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double q = ranked.probs[i];
        score[i] = q > 0.0 ? r(std::fabs(r(-r(std::log(q))) - entropy)) : HUGE_VAL;
    }
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&score](std::size_t a, std::size_t b) { return score[a] < score[b]; });
    double mass = 0.0;
    std::size_t count = n;
    auto walk_ids = std::make_shared<IdList>();
    auto walk_mass = std::make_shared<Values>();
    for (std::size_t i = 0; i < n; ++i) {
        mass = r(mass + ranked.probs[order[i]]);
        walk_ids->push_back(ranked.ids[order[i]]);
        walk_mass->push_back(mass);
        if (near_threshold(mass, p)) out.near_boundary = true;
        if (mass > p && i + 1 >= min_keep) {
            count = i + 1;
            break;
        }
    }
    if (count < n && score[order[count - 1]] == score[order[count]]) out.tie_at_boundary = true;
    for (std::size_t i = 0; i < count; ++i) out.kept.push_back(ranked.ids[order[i]]);
    std::sort(out.kept.begin(), out.kept.end());
    out.shown.entropy = entropy;
    out.shown.crossing_rank = count;
    out.shown.crossing_id = ranked.ids[order[count - 1]];
    out.shown.crossing_mass = (*walk_mass)[count - 1];
    out.shown.walk_ids = std::move(walk_ids);
    out.shown.walk_mass = std::move(walk_mass);
    return out;
}

bool gate(const SamplingParams& p, std::size_t) { return gate_typical_p(p.typical_p); }

bool typical_p(RowState& row, const PipelineStep&, StepReport& report, StageTrace& shown) {
    if (!gate(row.params, row.vocab)) return false;
    apply_outcome(row, decide(view_of(row), static_cast<std::size_t>(row.params.min_keep)), report, shown);
    return true;
}

constexpr Param kReads[] = {Param::TypicalP, Param::MinKeep};
constexpr StageUnit kUnit{kReads, listens_always, typical_p};

// min_keep is llama.cpp's, shared by its top-p, min-p, typical-p and XTC; this stage owns its row.
constexpr ParamInfo kStageParams[] = {
    {.param = Param::TypicalP, .key = "typical_p", .label = "Typical-p", .default_value = 1.0, .slider_min = 0.0,
     .slider_max = 1.0,
     .formula = "Locally typical (llama.cpp): rank ids by |-log q - H|, H the entropy of q; keep the shortest prefix "
                "whose mass passes p. Off at 1.",
     .valid_range = "in [0, 1]", .real = &SamplingParams::typical_p, .min = 0.0, .max = 1.0,
     .role = ParamRole::Switch, .on = gate, .summary = "typical-p"},
    {.param = Param::MinKeep, .key = "min_keep", .label = "Min keep", .default_value = 1.0, .slider_min = 0.0,
     .slider_max = 20.0,
     .formula = "llama.cpp's top-p, min-p, typical-p and XTC keep at least this many ids (0 acts as 1). Default 1.",
     .valid_range = "an integer >= 0", .whole = &SamplingParams::min_keep, .min = 0.0,
     // 0 and 1 act alike; above 1 it matters while one of the four is on.
     .on = [](const SamplingParams& p, std::size_t) {
         return p.min_keep > 1 && (uses_top_p(p) || uses_min_p(p) || gate(p, 0) || uses_xtc(p));
     }},
};

constexpr RuleInfo kStageRules[] = {
    {Rule::TypicalPLlamaCpp, Stage::TypicalP, "llamacpp", "|-log q - H| ranked, mass > p", "llamacpp",
     "H = -sum q log q; sort by |-log q - H| ascending; keep up to the first id whose running mass is > p "
     "(and at least min_keep ids).",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sampler_typical_apply", true},
};

}  // namespace

extern const StageDescriptor stage_typical_p_descriptor;
constinit const StageDescriptor stage_typical_p_descriptor{
    .stage = Stage::TypicalP,
    .name = "typical_p",
    .title = "Typical-p",
    .summary = "Rank by |-log q - H| (H the entropy of q); keep the shortest such prefix whose mass passes p.",
    .truncates = true,
    .mark = PlotMark::TypicalEntropy,
    .params = kStageParams,
    .rules = kStageRules,
    .gate = gate,
    .off_reason = [](const SamplingParams& p, std::size_t) {
        return off_because("typical_p = " + format_number(p.typical_p), "off at 1", true);
    },
    .unit = &kUnit,
};

}  // namespace samplescope
