// "Skip n draws" in O(log n): a request's PCG32 stream advanced by 2n outputs
// (each uniform takes two), so a row that has consumed millions of draws costs
// no more than a fresh one. The jump is the LCG's closed form (Brown, "Random
// number generation with arbitrary strides", 1994) and lands on exactly the
// state that n calls of uniform_f64() reach.
#pragma once

#include <cstdint>

#include "engine/core/generator.h"
#include "engine/core/portable.h"

namespace samplescope::batch {

SS_HD inline void advance_outputs(Pcg32& rng, std::uint64_t outputs) {
    std::uint64_t multiplier = 6364136223846793005ULL;
    std::uint64_t increment = rng.inc;
    std::uint64_t total_multiplier = 1;
    std::uint64_t total_increment = 0;
    while (outputs > 0) {
        if (outputs & 1U) {
            total_multiplier *= multiplier;
            total_increment = total_increment * multiplier + increment;
        }
        increment = (multiplier + 1) * increment;
        multiplier *= multiplier;
        outputs >>= 1;
    }
    rng.state = total_multiplier * rng.state + total_increment;
}

// The row's stream after `draws` uniforms.
SS_HD inline Pcg32 stream_after(std::uint64_t seed, std::uint64_t draws) {
    Pcg32 rng = stream(seed, kSampleLabel);
    advance_outputs(rng, 2 * draws);
    return rng;
}

}  // namespace samplescope::batch
