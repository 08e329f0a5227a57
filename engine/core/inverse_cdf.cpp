#include "engine/core/inverse_cdf.h"

namespace samplescope {

std::int32_t inverse_cdf_draw(const IdList& kept, const Values& probs, double u, Values* cumulative, bool& fell_back) {
    double c = 0.0;
    if (cumulative) cumulative->reserve(probs.size());
    std::int32_t chosen = -1;
    for (std::size_t i = 0; i < probs.size(); ++i) {
        c += probs[i];
        if (cumulative) cumulative->push_back(c);
        if (chosen < 0 && u < c) {
            chosen = kept[i];
            if (!cumulative) return chosen;
        }
    }
    if (chosen >= 0) return chosen;
    fell_back = true;
    for (std::size_t i = probs.size(); i-- > 0;) {
        if (probs[i] > 0.0) return kept[i];
    }
    return kept.back();
}

}  // namespace samplescope
