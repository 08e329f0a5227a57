// What the stage plots show, prepared off the GUI thread from a trace: each
// stage's candidates ranked for display (logit desc, id asc, the engine's own
// ranking rule), the top N of them, and the rest summed into one aggregate, so
// nothing is cut silently. Also the statistics panel's numbers. Qt-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "engine/stats/distribution_stats.h"
#include "engine/core/trace.h"

namespace samplescope::ui {

struct RankedToken {
    std::int32_t id = -1;
    double logit = 0.0;        // this stage's logit
    double prob_before = 0.0;  // q in the distribution the stage received
    double prob_after = 0.0;   // q after the stage (0 when dropped)
    bool kept = false;

    bool operator==(const RankedToken&) const = default;
};

// One point of a stage's whole-vocabulary curve: a candidate at its rank,
// standing for the ranks of its bucket (every rank up to kExactRanks, then
// log-spaced buckets) as the one with the largest q there (q after the stage
// for a kept id, q before it for a dropped one), so no spike is lost.
struct CurvePoint {
    std::size_t rank = 0;         // 1-based rank among the stage's candidates
    std::size_t bucket_first = 0;  // the ranks this point stands for
    std::size_t bucket_last = 0;
    RankedToken token;

    double shownProb() const { return token.kept ? token.prob_after : token.prob_before; }
    bool operator==(const CurvePoint&) const = default;
};

// Every candidate of a stage, ranked (logit desc, id asc) and downsampled on
// the log-rank axis: what the plot's "Whole vocabulary" view draws.
struct VocabCurve {
    static constexpr std::size_t kExactRanks = 300;   // every rank up to here is a point of its own
    static constexpr double kBucketRatio = 1.006;     // then a bucket ends at about 1.006 x its start

    std::size_t candidates = 0;   // ids the stage received
    std::size_t kept = 0;         // ids it kept
    std::size_t kept_first = 0;   // 1-based ranks of the first and last kept candidate, 0 when none
    std::size_t kept_last = 0;
    bool kept_prefix = true;      // the kept ids are exactly ranks 1..kept_last
    // Ascending rank; per bucket the kept candidate and the dropped candidate
    // of largest q, plus the kept region's edges (kept_first, kept_last and the
    // rank after it) as points of their own.
    std::vector<CurvePoint> points;
    std::optional<CurvePoint> chosen;  // the drawn (or greedy) token, where it is a candidate
    double min_prob = 0.0;             // the smallest positive q among the points

    bool operator==(const VocabCurve&) const = default;
};

// A candidate set in rank order (logit desc, id asc).
using RankOrder = std::vector<std::int32_t>;

// Ranks candidate sets once per distinct (ids, logits): a stage's order is
// derived from the largest order already known (the previous stage's, or the
// previous trace's), moving only the ids whose logit changed, so a trace's
// stages cost one sort of the row at most, and an unchanged row none. What it
// returns stays valid however many calls follow. Not thread-safe: one per
// worker thread.
class RankOrders {
public:
    // `ids` (ascending) ranked by (logits desc, id asc).
    std::shared_ptr<const RankOrder> ranked(const std::shared_ptr<const IdList>& ids,
                                            const std::shared_ptr<const Values>& logits);
    // The order ranked() made for these two arrays, if it is still held (null otherwise).
    std::shared_ptr<const RankOrder> known(const std::shared_ptr<const IdList>& ids,
                                           const std::shared_ptr<const Values>& logits) const;
    // position[id] = index of id in `ids` (ascending), -1 when absent; `vocab` entries.
    std::shared_ptr<const std::vector<std::int32_t>> positions(const std::shared_ptr<const IdList>& ids, std::size_t vocab);
    std::size_t fullSorts() const { return full_sorts_; }

private:
    struct Order {
        std::shared_ptr<const IdList> ids;
        std::shared_ptr<const Values> logits;
        std::shared_ptr<const RankOrder> order;
    };
    struct Positions {
        std::shared_ptr<const IdList> ids;
        std::shared_ptr<const std::vector<std::int32_t>> position;
    };
    std::deque<Order> orders_;
    std::deque<Positions> positions_;
    std::vector<char> scratch_;  // V flags, all zero between calls
    std::size_t full_sorts_ = 0;
};

// What a stage's plot is made from: its candidates (the kept set it received)
// ranked by its logits, and, for the whole-vocabulary curve, where each id
// sits in the received and the kept set. Immutable; shareable across threads.
struct StageRanking {
    std::shared_ptr<const RankOrder> order;
    std::shared_ptr<const std::vector<std::int32_t>> before_position;  // null unless made `with_positions`
    std::shared_ptr<const std::vector<std::int32_t>> now_position;
};

StageRanking rankStage(const SampleTrace& trace, Stage stage, RankOrders& orders, bool with_positions);
// The first `top_n` of the stage's candidates in rank order, all a bar plot reads: the whole order
// when `orders` holds one for the stage's two arrays (a curve's stage may share them), else a
// partial sort of the candidates (one pass, where a whole order would cost a merge or a sort).
StageRanking rankTop(const SampleTrace& trace, Stage stage, std::size_t top_n, const RankOrders& orders);

// The curve from a ranking made `with_positions`; reads the stages' q.
VocabCurve makeVocabCurve(const SampleTrace& trace, Stage stage, const StageRanking& ranking);
// The point for the trace's token in a curve of this stage (nothing when it is not a candidate).
std::optional<CurvePoint> chosenPoint(const SampleTrace& trace, Stage stage, const RankOrder& order, const VocabCurve& curve);

VocabCurve makeVocabCurve(const SampleTrace& trace, Stage stage, RankOrders& orders);

// A stage plot's two views: the top N bars, or the whole vocabulary (VocabCurve).
enum class PlotMode { Bars, Vocabulary };

// Whether a stage opens on the whole vocabulary: the raw logits and the
// truncation stages when they received more candidates than the N bars show.
bool vocabularyByDefault(Stage stage, std::size_t candidates, std::size_t top_n);

struct StagePlotData {
    Stage stage = Stage::Widen;
    bool active = false;
    std::size_t candidates = 0;           // ids the stage received
    std::vector<RankedToken> top;         // the first N candidates in rank order
    std::size_t rest_kept_count = 0;      // kept ids beyond the top N
    double rest_kept_mass = 0.0;          // their q after the stage
    std::size_t rest_dropped_count = 0;   // dropped ids beyond the top N
    double rest_dropped_mass = 0.0;       // their q before the stage
    std::size_t selected_rank = 0;        // 1-based rank of the selected id among candidates, 0 if absent
    VocabCurve curve;                     // the whole vocabulary (empty unless made with RankOrders)

    bool operator==(const StagePlotData&) const = default;
};

struct TruncationStats {
    DistributionStats before;     // after temperature, before top-k / top-p / min-p
    DistributionStats after;      // the final kept set
    double kept_mass = 1.0;       // mass of the final kept set in the `before` distribution
};

// The stage whose distribution `stage` received: the one before it in the
// trace's own order (itself for the first).
Stage inputStage(const SampleTrace& trace, Stage stage);

// With `orders`, also the stage's whole-vocabulary curve.
StagePlotData makeStagePlotData(const SampleTrace& trace, Stage stage, std::size_t top_n,
                                   std::int32_t selected_id = -1, RankOrders* orders = nullptr);
// From a ranking of the stage: the top N are its first N; with `curve`, the
// ranking must be made `with_positions`.
StagePlotData makeStagePlotData(const SampleTrace& trace, Stage stage, std::size_t top_n, const StageRanking& ranking,
                                bool curve, std::int32_t selected_id = -1);

TruncationStats makeTruncationStats(const SampleTrace& trace);
// The same, with the `before` statistics already known (for the same q).
TruncationStats makeTruncationStats(const SampleTrace& trace, const DistributionStats& before);

// Ranks `ids` by (logit desc, id asc) and returns the first `count` of them.
std::vector<std::int32_t> topRanked(const IdList& ids, const Values& logits, std::size_t count);

// 1-based rank of `id` among `ids` by (logit desc, id asc); 0 when it is not among them.
std::size_t rankOf(const IdList& ids, const Values& logits, std::int32_t id);

}  // namespace samplescope::ui
