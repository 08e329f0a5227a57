#include "engine/stats/distribution_stats.h"

#include <algorithm>
#include <cmath>

namespace samplescope {

DistributionStats distribution_stats(std::span<const double> probs) {
    DistributionStats stats;
    stats.count = probs.size();
    double entropy = 0.0;
    for (const double q : probs) {
        if (q > 0.0) entropy -= q * std::log2(q);
        stats.top1_prob = std::max(stats.top1_prob, q);
    }
    // Rounding can leave -0 or a hair below 0 for a one-point distribution.
    stats.entropy_bits = std::max(entropy, 0.0);
    stats.perplexity = std::exp2(stats.entropy_bits);
    return stats;
}

double subset_mass(std::span<const std::int32_t> ids, std::span<const double> probs,
                   std::span<const std::int32_t> subset) {
    double mass = 0.0;
    std::size_t i = 0;
    for (const auto id : subset) {
        while (i < ids.size() && ids[i] < id) ++i;
        if (i == ids.size()) break;
        if (ids[i] == id) mass += probs[i];
    }
    return mass;
}

}  // namespace samplescope
