// The display data of one trace (each contract stage's plot data and the
// statistics), made on the sampling worker's thread with a second core's help.
// A stage whose inputs equal, value for value, those of the stage the builder
// made last time keeps that stage's data: moving one slider recomputes only the
// stages it reaches. Not thread-safe: one builder per worker thread.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "ui/common/plot_data.h"
#include "ui/common/trace_view.h"

namespace samplescope::ui {

class DisplayBuilder {
public:
    // The trace to build from, holding, in place of each array (a stage's
    // logits, kept set or held q) that equals value for value the array the
    // last built trace held at the same stage, that earlier array; and in
    // place of a q computed from such logits and kept set, the earlier q
    // (computed once, for both). Each pair of arrays is compared once here,
    // and everything after (this builder's checks, the rankings, the q) finds
    // the unchanged stages by pointer: a slider late in the pipeline does not
    // read the arrays of the stages before it again.
    std::shared_ptr<const SampleTrace> share(SampleTrace trace);
    // Fills view.stages and view.stats from view.trace (and view.top_n), and
    // the timing parts it took. `plot_modes`: each stage's chosen view, indexed
    // by Stage (absent: its default); a curve is made only where it is shown.
    void build(TraceView& view, const std::vector<std::optional<PlotMode>>& plot_modes);

private:
    // What a stage's data was made from (held, so a pointer seen again is the same array).
    struct Made {
        std::shared_ptr<const IdList> before_kept, now_kept;
        std::shared_ptr<const Values> now_logits, before_probs, now_probs;
        bool active = false;
        std::size_t top_n = 0;
        bool curve = false;
        std::shared_ptr<const RankOrder> order;
        StagePlotData data;
    };
    RankOrders orders_;
    std::array<std::optional<Made>, kStageCount> made_;
    std::vector<std::pair<Stage, StageProbs>> previous_probs_;  // the last trace's q, for its unchanged stages
    std::shared_ptr<const Values> stats_probs_;                 // the q whose statistics stats_before_ holds
    std::shared_ptr<const SampleTrace> previous_;               // the last trace built
    DistributionStats stats_before_;
};

}  // namespace samplescope::ui
