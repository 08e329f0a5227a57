#include "ui/common/plot_data.h"

#include <algorithm>

#include "engine/core/element_math.h"

namespace samplescope::ui {

Stage inputStage(const SampleTrace& trace, Stage stage) {
    for (std::size_t i = 1; i < trace.stages.size(); ++i) {
        if (trace.stages[i].stage == stage) return trace.stages[i - 1].stage;
    }
    return stage;
}

std::vector<std::int32_t> topRanked(const IdList& ids, const Values& logits, std::size_t count) {
    const auto by_rank = [&logits](std::int32_t a, std::int32_t b) {
        return ranks_before(logits[static_cast<std::size_t>(a)], a, logits[static_cast<std::size_t>(b)], b);
    };
    std::vector<std::int32_t> top(std::min(count, ids.size()));
    std::partial_sort_copy(ids.begin(), ids.end(), top.begin(), top.end(), by_rank);
    return top;
}

std::size_t rankOf(const IdList& ids, const Values& logits, std::int32_t id) {
    if (!std::binary_search(ids.begin(), ids.end(), id)) return 0;
    const double logit = logits[static_cast<std::size_t>(id)];
    std::size_t ahead = 0;
    for (const auto other : ids) {
        if (ranks_before(logits[static_cast<std::size_t>(other)], other, logit, id)) ++ahead;
    }
    return ahead + 1;
}

StagePlotData makeStagePlotData(const SampleTrace& trace, Stage stage, std::size_t top_n,
                                   std::int32_t selected_id) {
    StagePlotData data;
    const StageTrace& now = trace.stage(stage);
    const StageTrace& before = trace.stage(inputStage(trace, stage));
    data.stage = stage;
    data.active = now.active;
    const IdList& candidates = *before.kept;
    const Values& logits = *now.logits;
    data.candidates = candidates.size();

    const auto top_ids = topRanked(candidates, logits, top_n);
    data.top.reserve(top_ids.size());
    for (const auto id : top_ids) {
        RankedToken token;
        token.id = id;
        token.logit = logits[static_cast<std::size_t>(id)];
        token.prob_before = before.prob_of(id);
        token.kept = now.keeps(id);
        token.prob_after = token.kept ? now.prob_of(id) : 0.0;
        data.top.push_back(token);
    }

    // The rest: every candidate not shown, summed in ascending id order.
    std::vector<std::int32_t> shown(top_ids);
    std::sort(shown.begin(), shown.end());
    const IdList& kept = *now.kept;
    std::size_t shown_at = 0;
    std::size_t kept_at = 0;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const auto id = candidates[i];
        while (shown_at < shown.size() && shown[shown_at] < id) ++shown_at;
        while (kept_at < kept.size() && kept[kept_at] < id) ++kept_at;
        const bool is_shown = shown_at < shown.size() && shown[shown_at] == id;
        const bool is_kept = kept_at < kept.size() && kept[kept_at] == id;
        if (is_shown) continue;
        if (is_kept) {
            ++data.rest_kept_count;
            data.rest_kept_mass += (*now.probs)[kept_at];
        } else {
            ++data.rest_dropped_count;
            data.rest_dropped_mass += (*before.probs)[i];
        }
    }
    if (selected_id >= 0) data.selected_rank = rankOf(candidates, logits, selected_id);
    return data;
}

TruncationStats makeTruncationStats(const SampleTrace& trace) {
    TruncationStats stats;
    const StageTrace& before = trace.stage(Stage::Temperature);
    stats.before = distribution_stats(*before.probs);
    stats.after = distribution_stats(trace.final_probs());
    stats.kept_mass = subset_mass(*before.kept, *before.probs, trace.final_kept());
    return stats;
}

}  // namespace samplescope::ui
