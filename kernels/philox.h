// The fast mode's random numbers: Philox4x32-10 (Salmon et al., "Parallel
// random numbers: as easy as 1, 2, 3", SC 2011), a counter-based generator.
// Written here as __host__ __device__ code because the host twin must draw the
// very same numbers as the CUDA kernel, and cuRAND's Philox is device-only.
// A counter-based generator makes the noise a pure function of (seed, draw
// position, token id): no state to carry between rows, steps or threads, so a
// row's token cannot depend on the other rows, its row index or the batch size.
#pragma once

#include <cmath>
#include <cstdint>

#include "engine/core/generator.h"
#include "engine/base/portable.h"

namespace samplescope::batch {

// The generator label of the fast mode's Gumbel noise (the contract's label
// scheme: `sample` = 4 is the exact draws' PCG32 stream; this is a new use, so a
// new label). The Philox key is child_seed(seed, kGumbelNoiseLabel).
inline constexpr std::uint64_t kGumbelNoiseLabel = 5;

struct Philox4x32 {
    std::uint32_t v[4];
};

SS_HD inline void philox_mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi, std::uint32_t& lo) {
    const std::uint64_t product = static_cast<std::uint64_t>(a) * b;
    hi = static_cast<std::uint32_t>(product >> 32);
    lo = static_cast<std::uint32_t>(product);
}

// Ten rounds with the published multipliers and Weyl key increments.
SS_HD inline Philox4x32 philox4x32_10(Philox4x32 counter, std::uint32_t key0, std::uint32_t key1) {
    for (int round = 0; round < 10; ++round) {
        std::uint32_t hi0, lo0, hi1, lo1;
        philox_mulhilo(0xD2511F53u, counter.v[0], hi0, lo0);
        philox_mulhilo(0xCD9E8D57u, counter.v[2], hi1, lo1);
        counter = Philox4x32{{hi1 ^ counter.v[1] ^ key0, lo1, hi0 ^ counter.v[3] ^ key1, lo0}};
        key0 += 0x9E3779B9u;
        key1 += 0xBB67AE85u;
    }
    return counter;
}

// A uniform in the open interval (0, 1) for (seed, draw position, token id):
// 53 bits from two Philox words, offset by half a step so neither end occurs.
SS_HD inline double noise_uniform(std::uint64_t seed, std::uint64_t position, std::int32_t id) {
    const std::uint64_t key = child_seed(seed, kGumbelNoiseLabel);
    const Philox4x32 counter{{static_cast<std::uint32_t>(position), static_cast<std::uint32_t>(position >> 32),
                              static_cast<std::uint32_t>(id), 0u}};
    const Philox4x32 out =
        philox4x32_10(counter, static_cast<std::uint32_t>(key), static_cast<std::uint32_t>(key >> 32));
    const std::uint64_t bits = ((static_cast<std::uint64_t>(out.v[0]) << 32) | out.v[1]) >> 11;
    return (static_cast<double>(bits) + 0.5) * 0x1.0p-53;
}

// Standard Gumbel noise, -log(-log(u)), in f64 (in f32 the tail near u = 1 is
// cut off at 2^-24 and rare tokens would be drawn too seldom).
SS_HD inline double gumbel_noise(std::uint64_t seed, std::uint64_t position, std::int32_t id) {
    return -::log(-::log(noise_uniform(seed, position, id)));
}

// The race score of a kept token: argmax over the kept set of l / T + G is a
// draw from softmax(l / T) over that set (the Gumbel-max trick).
SS_HD inline double gumbel_score(float logit, double temperature, std::uint64_t seed, std::uint64_t position,
                                 std::int32_t id) {
    return static_cast<double>(logit) / temperature + gumbel_noise(seed, position, id);
}

}  // namespace samplescope::batch
