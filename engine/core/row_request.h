// One request as a row of a batch or a params file gives it: the parameters,
// the history and the draws to skip. Plain data; engine/json/params_json.h
// reads it from JSON.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/sampling_params.h"

namespace samplescope {

struct RowRequest {
    SamplingParams params;
    std::vector<std::int64_t> prompt_ids;
    std::vector<std::int64_t> output_ids;
    std::uint64_t skip_draws = 0;
};

}  // namespace samplescope
