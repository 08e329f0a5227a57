// One sampled step, ready to display: the engine's trace plus what the views
// derive from it for display (ranked top-N per stage, statistics). Built off
// the GUI thread and shared read-only by every view.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/core/trace.h"
#include "engine/stages/pipeline.h"
#include "ui/common/plot_data.h"
#include "ui/common/token_labels.h"

namespace samplescope::ui {

struct TraceView {
    std::uint64_t generation = 0;  // which request of the session produced it
    std::shared_ptr<const SampleTrace> trace;
    std::shared_ptr<const std::vector<double>> raw_logits;  // the row as given
    std::shared_ptr<const TokenLabels> labels;
    std::vector<StagePlotData> stages;  // one per stage of the trace (the main view: the contract's)
    TruncationStats stats;
    std::size_t top_n = 0;
    double compute_ms = 0.0;      // wall time the worker took (engine step + display data)
    double compute_cpu_ms = 0.0;  // CPU time of that work on the worker's thread (a helper core's is not counted)
    // Where the worker's wall time went: the engine step; finding the arrays
    // equal to the previous trace's (DisplayBuilder::share); ranking each
    // stage's candidates while a second core computes every stage's q; the
    // plot data and statistics on both cores. And how many stages kept the
    // data made for the previous trace because their inputs were equal.
    struct WorkerParts {
        double step_ms = 0.0;
        double share_ms = 0.0;
        double rank_ms = 0.0;
        double display_ms = 0.0;
        std::size_t reused_stages = 0;
    };
    WorkerParts parts;
    // The pipeline run around the trace, where the view came from one (the
    // pipeline views): each step's report, XTC's two outcomes and mirostat's
    // mu after the draw. Null for the main view.
    std::shared_ptr<const PipelineTrace> pipeline;

    // Throws std::out_of_range for a stage it does not hold.
    const StagePlotData& plot(Stage stage) const {
        for (const auto& data : stages) {
            if (data.stage == stage) return data;
        }
        throw std::out_of_range("this view has no stage \"" + std::string(stage_info(stage).name) + "\"");
    }
};

}  // namespace samplescope::ui
