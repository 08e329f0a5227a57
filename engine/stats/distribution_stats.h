// Summary statistics of one distribution from a trace (entropy, perplexity,
// top-1 probability) and the mass a subset of ids carries in it. Pure functions
// over the trace's probabilities: the views display them, nothing here samples.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace samplescope {

struct DistributionStats {
    std::size_t count = 0;      // ids in the distribution (its kept set)
    double entropy_bits = 0.0;  // -sum q log2 q, over q > 0
    double perplexity = 1.0;    // 2^entropy
    double top1_prob = 0.0;     // max q
};

// `probs` is a distribution (a stage's probs, aligned with its kept ids).
// Sums run in the given order, one after another, like every sum of the engine.
DistributionStats distribution_stats(std::span<const double> probs);

// The mass that `subset` carries in the distribution (ids, probs): both id
// lists ascending, `subset` a subset of `ids`; ids not in `ids` count as 0.
double subset_mass(std::span<const std::int32_t> ids, std::span<const double> probs,
                   std::span<const std::int32_t> subset);

}  // namespace samplescope
