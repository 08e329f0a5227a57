#include "engine/core/inverse_cdf.h"

#include "engine/core/row_math.h"

namespace samplescope {

std::int32_t inverse_cdf_draw(const IdList& kept, const Values& probs, double u, Values* cumulative, bool& fell_back) {
    if (cumulative) cumulative->resize(probs.size());
    return inverse_cdf_walk(
        kept.data(), static_cast<std::int64_t>(kept.size()), [&probs](std::int64_t i) { return probs[static_cast<std::size_t>(i)]; },
        u, cumulative ? cumulative->data() : nullptr, fell_back);
}

}  // namespace samplescope
