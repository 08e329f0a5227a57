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

namespace {

constexpr std::size_t kKeptOrders = 8;

void sortByRank(std::vector<std::int32_t>& ids, const Values& logits) {
    std::sort(ids.begin(), ids.end(), [&logits](std::int32_t a, std::int32_t b) {
        return ranks_before(logits[static_cast<std::size_t>(a)], a, logits[static_cast<std::size_t>(b)], b);
    });
}

}  // namespace

const std::vector<std::int32_t>& RankOrders::ranked(const std::shared_ptr<const IdList>& ids_ptr,
                                                    const std::shared_ptr<const Values>& logits_ptr) {
    for (auto& known : orders_) {
        if (known.ids == ids_ptr && known.logits == logits_ptr) return known.order;
    }
    const IdList& ids = *ids_ptr;
    const Values& logits = *logits_ptr;
    const auto by_rank = [&logits](std::int32_t a, std::int32_t b) {
        return ranks_before(logits[static_cast<std::size_t>(a)], a, logits[static_cast<std::size_t>(b)], b);
    };
    // The bases: the known sets that can hold these ids, largest first, the most recent first on ties.
    std::vector<const Order*> bases;
    for (auto it = orders_.rbegin(); it != orders_.rend(); ++it) {
        if (it->ids->size() >= ids.size() && it->logits->size() == logits.size()) bases.push_back(&*it);
    }
    std::stable_sort(bases.begin(), bases.end(), [](const Order* a, const Order* b) { return a->ids->size() > b->ids->size(); });
    std::vector<std::int32_t> order;
    bool done = false;
    // A small set is sorted on its own; a large one is derived from a base.
    if (!bases.empty() && ids.size() * 8 >= logits.size()) {
        std::vector<char> member(logits.size(), 0);
        for (const auto id : ids) member[static_cast<std::size_t>(id)] = 1;
        order.reserve(ids.size());
        std::vector<std::int32_t> moved;
        for (const Order* base : bases) {
            order.clear();
            moved.clear();
            const Values& base_logits = *base->logits;
            for (const auto id : base->order) {
                const auto at = static_cast<std::size_t>(id);
                if (!member[at]) continue;
                order.push_back(id);
                if (base_logits[at] != logits[at]) moved.push_back(id);
            }
            if (order.size() != ids.size()) continue;
            if (moved.empty()) {
                done = true;
            } else if (moved.size() * 8 <= order.size()) {
                // A few logits changed (penalties): the others keep their order; merge the moved ones back in.
                std::vector<char> is_moved(logits.size(), 0);
                for (const auto id : moved) is_moved[static_cast<std::size_t>(id)] = 1;
                std::vector<std::int32_t> stay;
                stay.reserve(order.size() - moved.size());
                for (const auto id : order) {
                    if (!is_moved[static_cast<std::size_t>(id)]) stay.push_back(id);
                }
                std::sort(moved.begin(), moved.end(), by_rank);
                std::merge(stay.begin(), stay.end(), moved.begin(), moved.end(), order.begin(), by_rank);
                done = true;
            } else if (std::is_sorted(order.begin(), order.end(), by_rank)) {
                done = true;  // every logit changed but the order did not (temperature)
            }
            if (done) break;
        }
    }
    if (!done) {
        order.assign(ids.begin(), ids.end());
        sortByRank(order, logits);
        if (ids.size() * 8 >= logits.size()) ++full_sorts_;
    }
    if (orders_.size() >= kKeptOrders) {
        // Drop the oldest entry that is not the largest set (the base of the next trace).
        auto largest = orders_.begin();
        for (auto it = orders_.begin(); it != orders_.end(); ++it) {
            if (it->ids->size() > largest->ids->size()) largest = it;
        }
        orders_.erase(largest == orders_.begin() ? orders_.begin() + 1 : orders_.begin());
    }
    orders_.push_back(Order{ids_ptr, logits_ptr, std::move(order)});
    return orders_.back().order;
}

const std::vector<std::int32_t>& RankOrders::positions(const std::shared_ptr<const IdList>& ids_ptr, std::size_t vocab) {
    for (auto& known : positions_) {
        if (known.ids == ids_ptr && known.position.size() == vocab) return known.position;
    }
    if (positions_.size() >= 3) positions_.pop_front();
    Positions made{ids_ptr, std::vector<std::int32_t>(vocab, -1)};
    const IdList& ids = *ids_ptr;
    for (std::size_t i = 0; i < ids.size(); ++i) made.position[static_cast<std::size_t>(ids[i])] = static_cast<std::int32_t>(i);
    positions_.push_back(std::move(made));
    return positions_.back().position;
}

VocabCurve makeVocabCurve(const SampleTrace& trace, Stage stage, RankOrders& orders) {
    VocabCurve curve;
    const StageTrace& now = trace.stage(stage);
    const StageTrace& before = trace.stage(inputStage(trace, stage));
    const Values& logits = *now.logits;
    const auto& order = orders.ranked(before.kept, now.logits);
    const std::size_t vocab = logits.size();
    // Both stay valid: the cache holds three and evicts only its oldest.
    const auto& before_position = orders.positions(before.kept, vocab);
    const auto& now_position = orders.positions(now.kept, vocab);
    const Values& before_probs = *before.probs;
    const Values& now_probs = *now.probs;
    curve.candidates = order.size();
    curve.kept = now.kept_count();

    const auto token_at = [&](std::size_t index) {
        const std::int32_t id = order[index];
        const auto at = static_cast<std::size_t>(id);
        RankedToken token;
        token.id = id;
        token.logit = logits[at];
        token.prob_before = before_position[at] >= 0 ? before_probs[static_cast<std::size_t>(before_position[at])] : 0.0;
        token.kept = now_position[at] >= 0;
        token.prob_after = token.kept ? now_probs[static_cast<std::size_t>(now_position[at])] : 0.0;
        return token;
    };

    // The kept region's bounds first: its edges become points of their own.
    for (std::size_t i = 0; i < order.size(); ++i) {
        if (now_position[static_cast<std::size_t>(order[i])] < 0) continue;
        if (curve.kept_first == 0) curve.kept_first = i + 1;
        curve.kept_last = i + 1;
    }
    curve.kept_prefix = curve.kept == 0 || (curve.kept_first == 1 && curve.kept_last == curve.kept);

    curve.points.reserve(2048);
    std::size_t first = 1;
    while (first <= order.size()) {
        std::size_t last = first;
        if (first > VocabCurve::kExactRanks) {
            last = std::max(first, static_cast<std::size_t>(static_cast<double>(first) * VocabCurve::kBucketRatio));
        }
        last = std::min(last, order.size());
        // The largest shown q of each kind in the bucket, and the edges of the kept region.
        std::optional<CurvePoint> best_kept, best_dropped;
        std::vector<CurvePoint> edges;
        for (std::size_t rank = first; rank <= last; ++rank) {
            const std::int32_t id = order[rank - 1];
            const bool kept = now_position[static_cast<std::size_t>(id)] >= 0;
            const bool edge = rank == curve.kept_first || rank == curve.kept_last || rank == curve.kept_last + 1;
            if (!edge && first != last) {
                // Only the bucket's maximum is needed: compare before building a point.
                const double q = kept ? now_probs[static_cast<std::size_t>(now_position[static_cast<std::size_t>(id)])]
                                      : (before_position[static_cast<std::size_t>(id)] >= 0
                                             ? before_probs[static_cast<std::size_t>(before_position[static_cast<std::size_t>(id)])]
                                             : 0.0);
                auto& best = kept ? best_kept : best_dropped;
                if (best && !(q > best->shownProb())) continue;
            }
            CurvePoint point{rank, first, last, token_at(rank - 1)};
            if (edge) edges.push_back(point);
            auto& best = point.token.kept ? best_kept : best_dropped;
            if (!best || point.shownProb() > best->shownProb()) best = point;
        }
        // An edge that is not its bucket's largest stands for its own rank only.
        for (auto& point : edges) {
            const bool is_best = (best_kept && best_kept->rank == point.rank) || (best_dropped && best_dropped->rank == point.rank);
            if (!is_best) point.bucket_first = point.bucket_last = point.rank;
        }
        std::vector<CurvePoint> bucket = std::move(edges);
        for (auto& best : {best_kept, best_dropped}) {
            if (best && std::none_of(bucket.begin(), bucket.end(), [&](const CurvePoint& p) { return p.rank == best->rank; })) {
                bucket.push_back(*best);
            }
        }
        std::sort(bucket.begin(), bucket.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.rank < b.rank; });
        for (auto& point : bucket) {
            if (point.shownProb() > 0.0 && (curve.min_prob == 0.0 || point.shownProb() < curve.min_prob)) {
                curve.min_prob = point.shownProb();
            }
            curve.points.push_back(point);
        }
        first = last + 1;
    }
    if (trace.token >= 0) {
        for (std::size_t i = 0; i < order.size(); ++i) {
            if (order[i] != trace.token) continue;
            std::size_t bucket_first = i + 1, bucket_last = i + 1;
            for (const auto& point : curve.points) {
                if (point.bucket_first <= i + 1 && i + 1 <= point.bucket_last) {
                    bucket_first = point.bucket_first;
                    bucket_last = point.bucket_last;
                }
            }
            curve.chosen = CurvePoint{i + 1, bucket_first, bucket_last, token_at(i)};
            break;
        }
    }
    return curve;
}

bool vocabularyByDefault(Stage stage, std::size_t candidates, std::size_t top_n) {
    return candidates > top_n && (stage == Stage::Widen || stage_info(stage).truncates);
}

StagePlotData makeStagePlotData(const SampleTrace& trace, Stage stage, std::size_t top_n,
                                   std::int32_t selected_id, RankOrders* orders) {
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
    // Read once: each read of a StageProbs takes its lock.
    const Values& now_probs = *now.probs;
    const Values& before_probs = *before.probs;
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
            data.rest_kept_mass += now_probs[kept_at];
        } else {
            ++data.rest_dropped_count;
            data.rest_dropped_mass += before_probs[i];
        }
    }
    if (selected_id >= 0) data.selected_rank = rankOf(candidates, logits, selected_id);
    if (orders && stage != Stage::Draw) data.curve = makeVocabCurve(trace, stage, *orders);
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
