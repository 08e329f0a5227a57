// The XTC unit ("exclude top choices"), as llama.cpp defines it
// (ggml-org/llama.cpp src/llama-sampling.cpp llama_sample_xtc_apply): off at
// probability <= 0 or threshold > 0.5, and with fewer than two candidates.
// Otherwise a coin u is thrown; when u < probability, the candidates are
// taken in rank order (q descending) and every id with q >= threshold is
// removed except the last of them, provided two or more qualify and at least
// min_keep ids remain.
//
// llama.cpp throws its coin with its own generator; here it is the step's
// uniform of XTC's own stream (label 6, generator.h xtc_coin), handed in by
// the runner as PipelineInput::xtc_coin, so the contract's draw accounting is
// unchanged. llama.cpp skips when the coin is above the probability, firing
// at u <= p; u < p here makes the chance exactly p (they differ on one value
// of u in 2^53). The runner also reports both outcomes' final distributions
// and their mixture (PipelineTrace::xtc).
#include <algorithm>
#include <array>
#include <stdexcept>

#include "engine/base/input_error.h"
#include "engine/core/gates.h"
#include "engine/stages/stage_unit.h"
#include "engine/stages/truncation.h"

namespace samplescope {

namespace {

// llama_sample_xtc_apply returns at probability <= 0 or threshold > 0.5.
bool gate(const SamplingParams& p, std::size_t) { return gate_xtc(p.xtc_probability, p.xtc_threshold); }

bool xtc(RowState& row, const PipelineStep&, StepReport& report, StageTrace& shown) {
    if (!gate(row.params, row.vocab)) return false;
    const TruncationView view = view_of(row);
    if (view.candidates.size() < 2) return false;
    if (!row.input.xtc_coin) throw std::logic_error("an XTC step needs the step's coin (PipelineInput::xtc_coin)");
    const double coin = *row.input.xtc_coin;
    const double threshold = view.params.xtc_threshold;
    const Ranked ranked = ranked_candidates(view);
    const std::size_t n = ranked.ids.size();
    TruncationOutcome out;
    std::size_t qualifying = 0;
    while (qualifying < n && ranked.probs[qualifying] >= threshold) {
        if (near_threshold(ranked.probs[qualifying], threshold)) out.near_boundary = true;
        ++qualifying;
    }
    if (qualifying < n && near_threshold(ranked.probs[qualifying], threshold)) out.near_boundary = true;
    const std::size_t removable = qualifying >= 2 ? qualifying - 1 : 0;
    const bool possible = removable > 0 && n - removable >= static_cast<std::size_t>(view.params.min_keep);
    const bool fired = coin < view.params.xtc_probability;
    IdList removed(ranked.ids.begin(), ranked.ids.begin() + static_cast<std::ptrdiff_t>(possible ? removable : 0));
    std::sort(removed.begin(), removed.end());
    out.shown.xtc_coin = coin;
    out.shown.xtc_fired = fired && possible;
    out.shown.xtc_removed = std::make_shared<const IdList>(removed);
    if (!possible) {
        out.kept = view.candidates;
        out.note = removable == 0 ? "fewer than two ids reach the threshold: nothing to exclude"
                                  : "excluding would leave fewer than min_keep ids";
    } else if (fired) {
        // The least likely qualifying id stays: an unstable sort picks it among equals.
        out.tie_at_boundary = tie_across(view, ranked, removable);
        out.kept.assign(ranked.ids.begin() + static_cast<std::ptrdiff_t>(removable), ranked.ids.end());
        std::sort(out.kept.begin(), out.kept.end());
        out.note = "coin " + format_number(coin) + " < " + format_number(view.params.xtc_probability) + ": " +
                   std::to_string(removable) + " top choices excluded";
    } else {
        out.kept = view.candidates;
        out.note = "coin " + format_number(coin) + " >= " + format_number(view.params.xtc_probability) +
                   ": nothing excluded this time";
    }
    apply_outcome(row, std::move(out), report, shown);
    return true;
}

constexpr Param kReads[] = {Param::XtcProbability, Param::XtcThreshold, Param::MinKeep};
constexpr StageUnit kUnit{kReads, listens_always, xtc};

constexpr ParamInfo kStageParams[] = {
    {.param = Param::XtcProbability, .key = "xtc_probability", .label = "XTC probability", .default_value = 0.0,
     .slider_min = 0.0, .slider_max = 1.0,
     .formula = "Exclude top choices (llama.cpp): with this probability, drop every id with q >= threshold but the least "
                "likely of them (when two or more qualify). Off at 0.",
     .valid_range = "in [0, 1]", .real = &SamplingParams::xtc_probability, .min = 0.0, .max = 1.0,
     .role = ParamRole::Switch, .on = gate, .blocked = "off (t > 0.5)", .summary = "XTC"},
    {.param = Param::XtcThreshold, .key = "xtc_threshold", .label = "XTC threshold", .default_value = 0.1,
     .slider_min = 0.0, .slider_max = 1.0,
     .formula = "The q an id needs to count as a top choice for XTC. Off above 0.5. Default 0.1.",
     .valid_range = "in [0, 1]", .real = &SamplingParams::xtc_threshold, .min = 0.0, .max = 1.0, .on = gate,
     .badge = [](const SamplingParams& p, std::size_t vocab) {
         return p.xtc_threshold > 0.5 ? ParamBadge{"off (> 0.5)", false, {}} : shapes_badge(gate(p, vocab));
     }},
};

constexpr RuleInfo kStageRules[] = {
    {Rule::XtcLlamaCpp, Stage::Xtc, "llamacpp", "coin < p: drop q >= t but the last", "llamacpp",
     "A coin u from its own stream (label 6); u < p: in rank order, drop the ids with q >= threshold except the "
     "last of them, when two or more qualify and at least min_keep remain.",
     "ggml-org/llama.cpp src/llama-sampling.cpp llama_sample_xtc_apply", true},
};

std::string off_reason(const SamplingParams& p, std::size_t) {
    return "Off: xtc_probability = " + format_number(p.xtc_probability) + ", xtc_threshold = " +
           format_number(p.xtc_threshold) + " (off at p = 0 or threshold > 0.5).\nNo coin is tossed; every candidate passes.";
}

std::string formula(const SamplingParams& p) {
    return "A coin u in [0, 1) (its own stream); u < p = " + format_number(p.xtc_probability) + ": of the ids with q >= t = " +
           format_number(p.xtc_threshold) + " (two or more), all but the least likely are removed, keeping at least min_keep = " +
           std::to_string(p.min_keep) + ". The exact final distribution is (1 - p) q_without + p q_with.";
}

}  // namespace

extern const StageDescriptor stage_xtc_descriptor;
constinit const StageDescriptor stage_xtc_descriptor{
    .stage = Stage::Xtc,
    .name = "xtc",
    .title = "XTC",
    .summary = "With probability p, drop every id with q >= threshold but the least likely of them (two or more "
               "qualifying).",
    .truncates = true,
    .mark = PlotMark::XtcRemoved,
    .params = kStageParams,
    .rules = kStageRules,
    .gate = gate,
    .off_reason = off_reason,
    .formula = formula,
    .unit = &kUnit,
};

}  // namespace samplescope
