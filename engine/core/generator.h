// The contract's random numbers (contract section 1): SplitMix64's finaliser,
// child seeds, PCG32 (XSH-RR) and the uniform double built from two outputs.
// Written here rather than taken from a library because the contract fixes the
// exact bit recipe (seeding, label scheme, uniform construction) and the same
// code must run inside CUDA kernels.
#pragma once

#include <cstdint>

#include "engine/base/portable.h"

namespace samplescope {

// The label of the sampler's own draws; other labels are reserved.
inline constexpr std::uint64_t kSampleLabel = 4;
// The label of XTC's coins (docs/contract.md "Labels"): the coin of the
// request's n-th sampled token (n counted as draws_before) is the n-th uniform
// of stream(seed, kXtcLabel), so the coins never touch the draws' accounting.
inline constexpr std::uint64_t kXtcLabel = 6;

SS_HD constexpr std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

SS_HD constexpr std::uint64_t child_seed(std::uint64_t seed, std::uint64_t label) {
    return mix64(seed + label * 0x9E3779B97F4A7C15ULL);
}

// PCG32's LCG multiplier (O'Neill's pcg32 reference), the one place it is written.
inline constexpr std::uint64_t kPcgMultiplier = 6364136223846793005ULL;

struct Pcg32 {
    std::uint64_t state = 0;
    std::uint64_t inc = 1;

    SS_HD constexpr Pcg32(std::uint64_t initstate, std::uint64_t initseq)
        : state(0), inc((initseq << 1) | 1U) {
        next_u32();
        state += initstate;
        next_u32();
    }

    SS_HD constexpr std::uint32_t next_u32() {
        const std::uint64_t old = state;
        state = old * kPcgMultiplier + inc;
        const auto xorshifted = static_cast<std::uint32_t>(((old >> 18) ^ old) >> 27);
        const auto rot = static_cast<std::uint32_t>(old >> 59);
        return (xorshifted >> rot) | (xorshifted << ((0U - rot) & 31U));
    }

    // Exactly two next_u32() calls: 53 random bits scaled into [0, 1).
    SS_HD constexpr double uniform_f64() {
        const std::uint64_t a = next_u32();
        const std::uint64_t b = next_u32();
        return static_cast<double>(((a << 32) | b) >> 11) * 0x1.0p-53;
    }

    // Advances the state by `outputs` next_u32() calls in O(log outputs): the
    // LCG's closed form (Brown, "Random number generation with arbitrary
    // strides", 1994), landing on exactly the state the calls would reach.
    SS_HD constexpr void advance(std::uint64_t outputs) {
        std::uint64_t multiplier = kPcgMultiplier;
        std::uint64_t increment = inc;
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
        state = total_multiplier * state + total_increment;
    }

    // Discards `draws` uniforms (two outputs each). The state's period is 2^64,
    // so 2 x draws taken modulo 2^64 is the exact jump for every draw count.
    SS_HD constexpr void skip_draws(std::uint64_t draws) { advance(2 * draws); }
};

// stream(seed, label): the generator a request draws from.
SS_HD constexpr Pcg32 stream(std::uint64_t seed, std::uint64_t label) {
    return Pcg32(child_seed(seed, label), label);
}

// A request's sampling stream after `draws` uniforms.
SS_HD constexpr Pcg32 stream_after(std::uint64_t seed, std::uint64_t draws) {
    Pcg32 rng = stream(seed, kSampleLabel);
    rng.skip_draws(draws);
    return rng;
}

// XTC's coin for the token drawn after `draws_before` draws.
SS_HD constexpr double xtc_coin(std::uint64_t seed, std::uint64_t draws_before) {
    Pcg32 rng = stream(seed, kXtcLabel);
    rng.skip_draws(draws_before);
    return rng.uniform_f64();
}

}  // namespace samplescope
