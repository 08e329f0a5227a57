// A sampler verification (engine/stats/verification.h) as JSON: the fields
// `samplescope-cli verify` prints and the Python module returns.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/stages/pipeline.h"
#include "engine/stats/verification.h"

namespace samplescope {

nlohmann::ordered_json verification_to_json(const SamplerVerification& verification, const Pipeline& pipeline);

// `verify --plan`: per row the draws needed to detect `tv` with power 0.9.
nlohmann::ordered_json verify_plan_to_json(const std::vector<PipelineTrace>& exact, const std::vector<std::size_t>& rows,
                                           double tv, double alpha, const Pipeline& pipeline);

}  // namespace samplescope
