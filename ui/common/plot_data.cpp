#include "ui/common/plot_data.h"

#include <algorithm>
#include <cmath>
#include <span>

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

std::shared_ptr<const RankOrder> RankOrders::known(const std::shared_ptr<const IdList>& ids,
                                                   const std::shared_ptr<const Values>& logits) const {
    for (const auto& order : orders_) {
        if (order.ids == ids && order.logits == logits) return order.order;
    }
    return nullptr;
}

std::shared_ptr<const RankOrder> RankOrders::ranked(const std::shared_ptr<const IdList>& ids_ptr,
                                                    const std::shared_ptr<const Values>& logits_ptr) {
    if (auto order = known(ids_ptr, logits_ptr)) return order;
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
    std::shared_ptr<const RankOrder> result;
    // A small set is sorted on its own; a large one is derived from a base.
    if (!bases.empty() && ids.size() * 8 >= logits.size()) {
        if (scratch_.size() != logits.size()) scratch_.assign(logits.size(), 0);
        std::vector<std::int32_t> moved;
        RankOrder order;
        for (const Order* base : bases) {
            const Values& base_logits = *base->logits;
            moved.clear();
            // The same set as the base (the usual case: a stage that keeps every id, or the previous trace's
            // row): its changed logits are found in id order, one sequential pass over both rows.
            const bool same_set = base->ids == ids_ptr || *base->ids == ids;
            // Past an eighth of the set the moved ids are not merged back but the order checked
            // whole, so they are no longer collected.
            const std::size_t many = ids.size() / 8 + 1;
            if (same_set) {
                for (const auto id : ids) {
                    const auto at = static_cast<std::size_t>(id);
                    if (base_logits[at] != logits[at]) {
                        moved.push_back(id);
                        if (moved.size() >= many) break;
                    }
                }
                if (moved.empty()) {
                    result = base->order;  // shared: the same ranking
                    break;
                }
            } else {
                order.clear();
                order.reserve(ids.size());
                for (const auto id : ids) scratch_[static_cast<std::size_t>(id)] = 1;
                for (const auto id : *base->order) {
                    const auto at = static_cast<std::size_t>(id);
                    if (!scratch_[at]) continue;
                    order.push_back(id);
                    if (moved.size() < many && base_logits[at] != logits[at]) moved.push_back(id);
                }
                for (const auto id : ids) scratch_[static_cast<std::size_t>(id)] = 0;
                if (order.size() != ids.size()) continue;
                if (moved.empty()) {
                    result = std::make_shared<const RankOrder>(std::move(order));
                    break;
                }
            }
            const RankOrder& from = same_set ? *base->order : order;
            if (moved.size() < many) {
                // A few logits changed (penalties): the others keep their order; merge the moved ones back in.
                for (const auto id : moved) scratch_[static_cast<std::size_t>(id)] = 1;
                std::vector<std::int32_t> stay;
                stay.reserve(from.size() - moved.size());
                for (const auto id : from) {
                    if (!scratch_[static_cast<std::size_t>(id)]) stay.push_back(id);
                }
                for (const auto id : moved) scratch_[static_cast<std::size_t>(id)] = 0;
                std::sort(moved.begin(), moved.end(), by_rank);
                // Each moved id goes where a binary search of the others puts it (what std::merge gives,
                // without reading every other id's logit: a few reads per moved id instead of one per id).
                RankOrder merged;
                merged.reserve(from.size());
                auto at = stay.begin();
                for (const auto id : moved) {
                    const auto place = std::lower_bound(at, stay.end(), id, by_rank);
                    merged.insert(merged.end(), at, place);
                    merged.push_back(id);
                    at = place;
                }
                merged.insert(merged.end(), at, stay.end());
                result = std::make_shared<const RankOrder>(std::move(merged));
                break;
            }
            if (std::is_sorted(from.begin(), from.end(), by_rank)) {
                // Every logit changed but the order did not (temperature).
                result = same_set ? base->order : std::make_shared<const RankOrder>(std::move(order));
                break;
            }
        }
    }
    if (!result) {
        RankOrder order(ids.begin(), ids.end());
        sortByRank(order, logits);
        if (ids.size() * 8 >= logits.size()) ++full_sorts_;
        result = std::make_shared<const RankOrder>(std::move(order));
    }
    if (orders_.size() >= kKeptOrders) {
        // Drop the oldest entry that is not the largest set (the base of the next trace).
        auto largest = orders_.begin();
        for (auto it = orders_.begin(); it != orders_.end(); ++it) {
            if (it->ids->size() > largest->ids->size()) largest = it;
        }
        orders_.erase(largest == orders_.begin() ? orders_.begin() + 1 : orders_.begin());
    }
    orders_.push_back(Order{ids_ptr, logits_ptr, result});
    return result;
}

std::shared_ptr<const std::vector<std::int32_t>> RankOrders::positions(const std::shared_ptr<const IdList>& ids_ptr,
                                                                       std::size_t vocab) {
    for (auto& known : positions_) {
        // The same set (by pointer, or id for id: the previous trace's unchanged stage) has the same positions.
        if (known.position->size() == vocab && (known.ids == ids_ptr || *known.ids == *ids_ptr)) return known.position;
    }
    if (positions_.size() >= 3) positions_.pop_front();
    auto made = std::make_shared<std::vector<std::int32_t>>(vocab, -1);
    const IdList& ids = *ids_ptr;
    for (std::size_t i = 0; i < ids.size(); ++i) (*made)[static_cast<std::size_t>(ids[i])] = static_cast<std::int32_t>(i);
    positions_.push_back(Positions{ids_ptr, made});
    return made;
}

StageRanking rankStage(const SampleTrace& trace, Stage stage, RankOrders& orders, bool with_positions) {
    const StageTrace& now = trace.stage(stage);
    const StageTrace& before = trace.stage(inputStage(trace, stage));
    StageRanking ranking;
    ranking.order = orders.ranked(before.kept, now.logits);
    if (with_positions) {
        const std::size_t vocab = now.logits->size();
        ranking.before_position = orders.positions(before.kept, vocab);
        ranking.now_position = orders.positions(now.kept, vocab);
    }
    return ranking;
}

StageRanking rankTop(const SampleTrace& trace, Stage stage, std::size_t top_n, const RankOrders& orders) {
    const StageTrace& now = trace.stage(stage);
    const StageTrace& before = trace.stage(inputStage(trace, stage));
    StageRanking ranking;
    ranking.order = orders.known(before.kept, now.logits);
    if (!ranking.order) ranking.order = std::make_shared<const RankOrder>(topRanked(*before.kept, *now.logits, top_n));
    return ranking;
}

VocabCurve makeVocabCurve(const SampleTrace& trace, Stage stage, RankOrders& orders) {
    return makeVocabCurve(trace, stage, rankStage(trace, stage, orders, true));
}

VocabCurve makeVocabCurve(const SampleTrace& trace, Stage stage, const StageRanking& ranking) {
    VocabCurve curve;
    const StageTrace& now = trace.stage(stage);
    const StageTrace& before = trace.stage(inputStage(trace, stage));
    const Values& logits = *now.logits;
    const RankOrder& order = *ranking.order;
    const std::vector<std::int32_t>& before_position = *ranking.before_position;
    const std::vector<std::int32_t>& now_position = *ranking.now_position;
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

    // Each candidate's shown q in rank order, made in two passes that read the rows in id order
    // and one that reads them in rank order, once (the loop below then reads this array in order;
    // reading the positions and q at each rank costs three scattered reads per rank of a row that
    // has left the cache). The sign bit marks a dropped candidate: -q before, so -0 for q = 0.
    // Reused scratch, one per thread: two curves may be made at once.
    // Never shrunk: a curve of 100 candidates between two of V would otherwise zero V elements again.
    thread_local std::vector<double> by_id, by_rank;
    if (by_id.size() < logits.size()) by_id.resize(logits.size());
    if (by_rank.size() < order.size()) by_rank.resize(order.size());
    {
        const IdList& candidates = *before.kept;
        for (std::size_t i = 0; i < candidates.size(); ++i) by_id[static_cast<std::size_t>(candidates[i])] = -before_probs[i];
        const IdList& kept = *now.kept;
        for (std::size_t i = 0; i < kept.size(); ++i) by_id[static_cast<std::size_t>(kept[i])] = now_probs[i];
    }
    // The kept region's bounds too: its edges become points of their own.
    for (std::size_t i = 0; i < order.size(); ++i) {
        const double shown = by_id[static_cast<std::size_t>(order[i])];
        by_rank[i] = shown;
        if (std::signbit(shown)) continue;
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
            const double shown = by_rank[rank - 1];
            const bool edge = rank == curve.kept_first || rank == curve.kept_last || rank == curve.kept_last + 1;
            if (!edge && first != last) {
                // Only the bucket's maximum is needed: compare before building a point.
                auto& best = std::signbit(shown) ? best_dropped : best_kept;
                if (best && !(std::fabs(shown) > best->shownProb())) continue;
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
    curve.chosen = chosenPoint(trace, stage, order, curve);
    return curve;
}

namespace {

// A candidate as the plots show it at `stage`.
RankedToken tokenAt(const StageTrace& before, const StageTrace& now, std::int32_t id) {
    RankedToken token;
    token.id = id;
    token.logit = (*now.logits)[static_cast<std::size_t>(id)];
    token.prob_before = before.prob_of(id);
    token.kept = now.keeps(id);
    token.prob_after = token.kept ? now.prob_of(id) : 0.0;
    return token;
}

}  // namespace

std::optional<CurvePoint> chosenPoint(const SampleTrace& trace, Stage stage, const RankOrder& order, const VocabCurve& curve) {
    if (trace.token < 0) return std::nullopt;
    const auto found = std::find(order.begin(), order.end(), trace.token);
    if (found == order.end()) return std::nullopt;
    const std::size_t rank = static_cast<std::size_t>(found - order.begin()) + 1;
    std::size_t bucket_first = rank, bucket_last = rank;
    for (const auto& point : curve.points) {
        if (point.bucket_first <= rank && rank <= point.bucket_last) {
            bucket_first = point.bucket_first;
            bucket_last = point.bucket_last;
        }
    }
    const StageTrace& now = trace.stage(stage);
    const StageTrace& before = trace.stage(inputStage(trace, stage));
    return CurvePoint{rank, bucket_first, bucket_last, tokenAt(before, now, trace.token)};
}

bool vocabularyByDefault(Stage stage, std::size_t candidates, std::size_t top_n) {
    return candidates > top_n && (stage == Stage::Widen || stage_info(stage).truncates);
}

namespace {

// Where each of `wanted` (ascending) is in `ids` (ascending): the positions of those found, and
// the indices into `wanted` of those that are not. Each search starts where the last ended and
// gallops, so a few wanted ids cost a few reads and many cost one pass.
struct Positions {
    std::vector<std::size_t> found;
    std::vector<std::size_t> missing;
};

Positions positionsIn(const IdList& ids, std::span<const std::int32_t> wanted) {
    Positions out;
    out.found.reserve(wanted.size());
    auto from = ids.begin();
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        const std::int32_t id = wanted[i];
        std::size_t step = 1;
        auto bound = from;
        while (bound != ids.end() && *bound < id) {
            from = bound + 1;
            bound = static_cast<std::size_t>(ids.end() - from) > step ? from + static_cast<std::ptrdiff_t>(step) : ids.end();
            step *= 2;
        }
        from = std::lower_bound(from, bound, id);
        if (from != ids.end() && *from == id) {
            out.found.push_back(static_cast<std::size_t>(from - ids.begin()));
        } else {
            out.missing.push_back(i);
        }
    }
    return out;
}

// values[0] + values[1] + ... left to right, passing over the positions in `skip` (ascending, unique).
double sumExcept(const Values& values, const std::vector<std::size_t>& skip) {
    double sum = 0.0;
    std::size_t from = 0;
    for (const std::size_t at : skip) {
        for (std::size_t i = from; i < at; ++i) sum += values[i];
        from = at + 1;
    }
    for (std::size_t i = from; i < values.size(); ++i) sum += values[i];
    return sum;
}

// The top N bars from `top_ids` (rank order) and the rest summed in ascending id order.
StagePlotData plotDataFrom(const SampleTrace& trace, Stage stage, std::span<const std::int32_t> top_ids) {
    StagePlotData data;
    const StageTrace& now = trace.stage(stage);
    const StageTrace& before = trace.stage(inputStage(trace, stage));
    data.stage = stage;
    data.active = now.active;
    const IdList& candidates = *before.kept;
    data.candidates = candidates.size();
    data.top.reserve(top_ids.size());
    for (const auto id : top_ids) data.top.push_back(tokenAt(before, now, id));

    // The rest: every candidate not shown, summed in ascending id order (kept ids' q after, dropped
    // ids' q before), each sum over the runs between the ids it skips: the same additions in the
    // same order as one pass that tests every id, without a test per id.
    const IdList& kept = *now.kept;
    // Read once: each read of a StageProbs takes its lock.
    const Values& now_probs = *now.probs;
    std::vector<std::int32_t> shown(top_ids.begin(), top_ids.end());
    std::sort(shown.begin(), shown.end());
    if (&kept == &candidates || kept == candidates) {
        // Nothing dropped (the kept set is the candidates).
        const std::vector<std::size_t> skip = positionsIn(candidates, shown).found;
        data.rest_kept_count = candidates.size() - skip.size();
        data.rest_kept_mass = sumExcept(now_probs, skip);
        return data;
    }
    const Values& before_probs = *before.probs;
    // A kept id is a candidate (a stage keeps a subset of what it received); one that is not would
    // be passed over, as by the pass over the candidates.
    const Positions kept_at = positionsIn(candidates, kept);
    const Positions shown_in_kept = positionsIn(kept, shown);
    std::vector<std::size_t> kept_skip = shown_in_kept.found;
    kept_skip.insert(kept_skip.end(), kept_at.missing.begin(), kept_at.missing.end());
    std::sort(kept_skip.begin(), kept_skip.end());
    kept_skip.erase(std::unique(kept_skip.begin(), kept_skip.end()), kept_skip.end());
    data.rest_kept_count = kept.size() - kept_skip.size();
    data.rest_kept_mass = sumExcept(now_probs, kept_skip);
    // The dropped candidates: all but the kept and the shown.
    const std::vector<std::size_t> shown_at = positionsIn(candidates, shown).found;
    std::vector<std::size_t> dropped_skip;
    dropped_skip.reserve(kept_at.found.size() + shown_at.size());
    std::merge(kept_at.found.begin(), kept_at.found.end(), shown_at.begin(), shown_at.end(), std::back_inserter(dropped_skip));
    dropped_skip.erase(std::unique(dropped_skip.begin(), dropped_skip.end()), dropped_skip.end());
    data.rest_dropped_count = candidates.size() - dropped_skip.size();
    data.rest_dropped_mass = sumExcept(before_probs, dropped_skip);
    return data;
}

}  // namespace

StagePlotData makeStagePlotData(const SampleTrace& trace, Stage stage, std::size_t top_n,
                                   std::int32_t selected_id, RankOrders* orders) {
    if (orders) {
        const bool curve = stage != Stage::Draw;
        return makeStagePlotData(trace, stage, top_n, rankStage(trace, stage, *orders, curve), curve, selected_id);
    }
    const StageTrace& now = trace.stage(stage);
    const StageTrace& before = trace.stage(inputStage(trace, stage));
    StagePlotData data = plotDataFrom(trace, stage, topRanked(*before.kept, *now.logits, top_n));
    if (selected_id >= 0) data.selected_rank = rankOf(*before.kept, *now.logits, selected_id);
    return data;
}

StagePlotData makeStagePlotData(const SampleTrace& trace, Stage stage, std::size_t top_n, const StageRanking& ranking,
                                bool curve, std::int32_t selected_id) {
    const RankOrder& order = *ranking.order;
    StagePlotData data = plotDataFrom(trace, stage, std::span<const std::int32_t>(order.data(), std::min(top_n, order.size())));
    if (selected_id >= 0) {
        const auto found = std::find(order.begin(), order.end(), selected_id);
        if (found != order.end()) data.selected_rank = static_cast<std::size_t>(found - order.begin()) + 1;
    }
    if (curve) data.curve = makeVocabCurve(trace, stage, ranking);
    return data;
}

TruncationStats makeTruncationStats(const SampleTrace& trace) {
    return makeTruncationStats(trace, distribution_stats(*trace.stage(Stage::Temperature).probs));
}

TruncationStats makeTruncationStats(const SampleTrace& trace, const DistributionStats& before_stats) {
    TruncationStats stats;
    const StageTrace& before = trace.stage(Stage::Temperature);
    stats.before = before_stats;
    stats.after = distribution_stats(trace.final_probs());
    stats.kept_mass = subset_mass(*before.kept, *before.probs, trace.final_kept());
    return stats;
}

}  // namespace samplescope::ui
