#include "engine/stages/truncation.h"

#include <algorithm>
#include <iterator>

namespace samplescope {

Ranked ranked_candidates(const TruncationView& view, std::size_t prefix) {
    const Values probs = softmax_over_ids(view.logits, view.candidates, view.arithmetic);
    Values prob_of_id(view.logits.size(), 0.0);
    for (std::size_t i = 0; i < view.candidates.size(); ++i) prob_of_id[view.candidates[i]] = probs[i];
    Ranked ranked;
    ranked.ids = rank_order(view.logits, view.candidates, prefix);
    ranked.probs.reserve(ranked.ids.size());
    for (const auto id : ranked.ids) ranked.probs.push_back(prob_of_id[id]);
    return ranked;
}

void keep_prefix(const Ranked& ranked, std::size_t count, TruncationOutcome& out, bool with_walk) {
    out.kept.assign(ranked.ids.begin(), ranked.ids.begin() + static_cast<std::ptrdiff_t>(count));
    std::sort(out.kept.begin(), out.kept.end());
    if (!with_walk) return;
    auto walk_ids = std::make_shared<IdList>();
    auto walk_mass = std::make_shared<Values>();
    double mass = 0.0;
    for (std::size_t i = 0; i < count; ++i) {
        mass += ranked.probs[i];
        walk_ids->push_back(ranked.ids[i]);
        walk_mass->push_back(mass);
    }
    out.shown.crossing_rank = count;
    out.shown.crossing_id = ranked.ids[count - 1];
    out.shown.crossing_mass = mass;
    out.shown.walk_ids = std::move(walk_ids);
    out.shown.walk_mass = std::move(walk_mass);
}

bool tie_across(const TruncationView& view, const Ranked& ranked, std::size_t kept_count) {
    if (kept_count == 0 || kept_count >= ranked.ids.size()) return false;
    return view.logits[ranked.ids[kept_count - 1]] == view.logits[ranked.ids[kept_count]];
}

void apply_outcome(RowState& row, TruncationOutcome outcome, StepReport& report, StageTrace& shown) {
    if (row.joint()) {
        // A joint filter decides on the same ids as the step before; the
        // result is what both keep.
        IdList both;
        std::set_intersection(row.kept().begin(), row.kept().end(), outcome.kept.begin(), outcome.kept.end(),
                              std::back_inserter(both));
        row.set_kept(std::move(both));
    } else {
        row.set_kept(std::move(outcome.kept));
    }
    report.tie_at_boundary = outcome.tie_at_boundary;
    report.near_boundary = outcome.near_boundary;
    if (!outcome.note.empty()) report.note = outcome.note;
    shown.kth_logit = outcome.shown.kth_logit;
    shown.crossing_rank = outcome.shown.crossing_rank;
    shown.crossing_id = outcome.shown.crossing_id;
    shown.crossing_mass = outcome.shown.crossing_mass;
    shown.max_prob = outcome.shown.max_prob;
    shown.prob_floor = outcome.shown.prob_floor;
    shown.entropy = outcome.shown.entropy;
    shown.max_logit = outcome.shown.max_logit;
    shown.logit_mean = outcome.shown.logit_mean;
    shown.logit_sigma = outcome.shown.logit_sigma;
    shown.logit_floor = outcome.shown.logit_floor;
    shown.xtc_coin = outcome.shown.xtc_coin;
    shown.xtc_fired = outcome.shown.xtc_fired;
    shown.xtc_removed = std::move(outcome.shown.xtc_removed);
    shown.mirostat_mu = outcome.shown.mirostat_mu;
    shown.mirostat_s_hat = outcome.shown.mirostat_s_hat;
    shown.mirostat_k = outcome.shown.mirostat_k;
    shown.walk_ids = std::move(outcome.shown.walk_ids);
    shown.walk_mass = std::move(outcome.shown.walk_mass);
}

}  // namespace samplescope
