// What the "Verify a sampler" tab draws for one verified row, prepared once
// from the verification (engine/stats/verification.h) so the widget only draws.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/stages/pipeline.h"
#include "engine/stats/verification.h"

namespace samplescope {

struct VerifyPlotData {
    // The kept ids by descending q (ties by id), then the support violations.
    std::vector<std::int64_t> ids;
    std::vector<double> q;          // exact q (0 for a violation)
    std::vector<double> observed;   // observed frequency: count / N
    std::vector<bool> violation;    // drawn outside the support
    std::vector<bool> tail;         // in the tail region
    std::size_t tail_first = 0;     // positions [tail_first, kept) are the tail (ascending q at the right)
    std::size_t kept = 0;           // positions [0, kept) are the kept ids
};

// `samples` are the row's draws (the counts are taken again here).
VerifyPlotData verifyPlotData(const PipelineTrace& exact, const std::vector<std::int64_t>& samples);

}  // namespace samplescope
