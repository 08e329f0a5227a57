// What the stage plots show, prepared off the GUI thread from a trace: each
// stage's candidates ranked for display (logit desc, id asc, the engine's own
// ranking rule), the top N of them, and the rest summed into one aggregate, so
// nothing is cut silently. Also the statistics panel's numbers. Qt-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
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

StagePlotData makeStagePlotData(const SampleTrace& trace, Stage stage, std::size_t top_n,
                                   std::int32_t selected_id = -1);

TruncationStats makeTruncationStats(const SampleTrace& trace);

// Ranks `ids` by (logit desc, id asc) and returns the first `count` of them.
std::vector<std::int32_t> topRanked(const IdList& ids, const Values& logits, std::size_t count);

// 1-based rank of `id` among `ids` by (logit desc, id asc); 0 when it is not among them.
std::size_t rankOf(const IdList& ids, const Values& logits, std::int32_t id);

}  // namespace samplescope::ui
