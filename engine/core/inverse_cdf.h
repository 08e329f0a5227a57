// The contract's draw (contract section 2, step 11), used by the reference
// sampler, every pipeline preset and the empirical sampler.
#pragma once

#include <cstdint>

#include "engine/core/trace.h"

namespace samplescope {

// The first kept id, in ascending id order, whose running sum of q exceeds u;
// when rounding leaves u at or above the last sum, the largest kept id with
// q > 0 (`fell_back` is then set). `cumulative` (optional) receives the sums.
std::int32_t inverse_cdf_draw(const IdList& kept, const Values& probs, double u, Values* cumulative, bool& fell_back);

}  // namespace samplescope
