// Two pipelines on the same row, parameters and seed: where their kept sets
// and final distributions part, and whether the same draw picks the same token.
#pragma once

#include <cstdint>

#include "engine/stages/pipeline.h"

namespace samplescope {

struct TokenComparison {
    std::int32_t id = -1;
    double prob_a = 0.0;  // q under pipeline A (0 when A drops it)
    double prob_b = 0.0;
};

struct PipelineDiff {
    PipelineTrace a;
    PipelineTrace b;
    IdList only_a;                        // kept by A, not by B (ascending)
    IdList only_b;
    std::vector<TokenComparison> tokens;  // every id either keeps, ascending
    double total_variation = 0.0;         // 1/2 sum |q_a - q_b| over those ids
    bool same_token = false;              // the same seed (and skip) drew the same token
};

// Runs both on fresh streams of the same seed (chosen once when the params
// give none), each after `skip_draws` discarded uniforms. Throws InputError.
PipelineDiff diff_pipelines(const Pipeline& a, const Pipeline& b, const PipelineInput& input,
                            std::uint64_t skip_draws = 0);

}  // namespace samplescope
