// Sixteen f32 lanes for the host twin's full-row passes (fast_row_host.cpp),
// written with the compiler's vector extensions so every pass is vector code
// whatever the target: one 512-bit register on x86-64-v4, two on v3, four SSE
// registers on the generic x86-64 baseline. The passes are compiled once per
// target and the best one the CPU supports is chosen when the program starts
// (SS_HOST_CLONES), so one generic binary runs everywhere.
//
// Each lane does exactly what the scalar code did for its ids, in the same
// order, with the same f32 operations (the build has -ffp-contract=off, so no
// multiply-add is fused on any target): the results are the same bits on
// every target and as before the passes were vectorised.
#pragma once

#include <cstdint>
#include <cstring>


// SAMPLESCOPE_NO_HOST_CLONES builds the passes for the compiler's target only.
#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__) && !defined(__clang__) && \
    !defined(SAMPLESCOPE_NO_HOST_CLONES)
#define SS_HOST_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define SS_HOST_CLONES
#endif

namespace samplescope::batch::lanes {

inline constexpr int kWidth = 16;

using F32 = float __attribute__((vector_size(64)));
using I32 = std::int32_t __attribute__((vector_size(64)));
using U32 = std::uint32_t __attribute__((vector_size(64)));

#define SS_LANE_INLINE [[gnu::always_inline]] inline

SS_LANE_INLINE F32 load(const float* from) {
    F32 v;
    std::memcpy(&v, from, sizeof v);
    return v;
}

SS_LANE_INLINE void store(float* to, const F32& v) { std::memcpy(to, &v, sizeof v); }

SS_LANE_INLINE F32 splat(float x) { return F32{} + x; }

SS_LANE_INLINE I32 iota() { return I32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}; }

// Whether any lane is set: the halves folded onto each other in registers.
SS_LANE_INLINE bool any(I32 mask) {
    mask |= __builtin_shufflevector(mask, mask, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    mask |= __builtin_shufflevector(mask, mask, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3);
    mask |= __builtin_shufflevector(mask, mask, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1);
    mask |= __builtin_shufflevector(mask, mask, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0);
    return mask[0] != 0;
}

// order_key() of rank_key.h, lane by lane: -0 reads as +0.
SS_LANE_INLINE U32 order_keys(const F32& v) {
    const F32 no_negative_zero = v == 0.0f ? F32{} : v;
    U32 bits;
    std::memcpy(&bits, &no_negative_zero, sizeof bits);
    const U32 sign = bits & 0x80000000u;
    return sign != 0u ? ~bits : (bits | 0x80000000u);
}

// exp_nonpositive_f32() of fast_select.h, lane by lane, operation for operation.
SS_LANE_INLINE F32 exp_nonpositive(const F32& x) {
    const F32 clamped = x < -87.0f ? splat(-87.0f) : x;
    const F32 n = (clamped * 1.44269504f + 12582912.0f) - 12582912.0f;
    const F32 r = (clamped - n * 0.693145751953125f) - n * 1.428606765330187e-06f;
    const F32 poly =
        1.0f + r * (1.0f + r * (0.5f + r * (0.16666667f + r * (0.041666668f + r * (0.008333334f + r * 0.0013888889f)))));
    const U32 exponent = __builtin_convertvector(__builtin_convertvector(n, I32) + 127, U32) << 23;
    F32 power;
    std::memcpy(&power, &exponent, sizeof power);
    const F32 scaled = poly * power;
    return x < -87.0f ? F32{} : scaled;
}

}  // namespace samplescope::batch::lanes
