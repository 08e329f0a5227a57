// Known answers for the fast mode's random numbers (kernels/philox.h), read
// by the host test (tests/batch/test_kernel_math.cpp) and by a CUDA kernel
// (kernels/check/philox_check.cu), so both sides are held to the same values.
// Plain C++17 data: nvcc compiles the kernel's side.
#pragma once

#include <cstdint>

namespace samplescope::batch {

// Random123's known-answer vectors for Philox4x32-10 (its tests/kat_vectors).
struct PhiloxAnswer {
    std::uint32_t counter[4];
    std::uint32_t key[2];
    std::uint32_t out[4];
};
inline constexpr PhiloxAnswer kPhiloxAnswers[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};
inline constexpr int kPhiloxAnswerCount = sizeof(kPhiloxAnswers) / sizeof(kPhiloxAnswers[0]);

// noise_uniform(seed, position, id): worked independently of this code
// (Philox4x32-10 of the counter (position, id) under the key
// child_seed(seed, 5), 53 bits + 1/2).
struct NoiseAnswer {
    std::uint64_t seed;
    std::uint64_t position;
    std::int32_t id;
    double value;
};
inline constexpr NoiseAnswer kNoiseAnswers[] = {
    {7, 3, 11, 0x1.618c73eea5f96p-3},
    {7, 4, 11, 0x1.c7da5ab2f3836p-1},
    {8, 3, 11, 0x1.48f98858dc781p-2},
};
inline constexpr int kNoiseAnswerCount = sizeof(kNoiseAnswers) / sizeof(kNoiseAnswers[0]);

}  // namespace samplescope::batch
