#include "engine/synthetic_logits.h"

#include <cmath>

#include "engine/generator.h"

namespace samplescope {

namespace {

double unit_from_hash(std::uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

}  // namespace

std::vector<double> realistic_logits(std::size_t vocab_size, std::uint64_t seed) {
    std::vector<double> logits(vocab_size);
    const double v = static_cast<double>(vocab_size);
    for (std::size_t i = 0; i < vocab_size; ++i) {
        const std::uint64_t h = mix64(seed * 0x9E3779B97F4A7C15ULL + i);
        const double rank = std::floor(v * unit_from_hash(h));
        const double noise = unit_from_hash(mix64(h)) - 0.5;
        logits[i] = 8.0 - 1.1 * std::log1p(rank) + 0.3 * noise;
    }
    return logits;
}

}  // namespace samplescope
