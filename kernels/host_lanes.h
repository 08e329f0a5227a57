// Sixteen f32 lanes for the host twin's full-row passes (fast_row_host.cpp).
// A pass is written once, as a template over the width W of the target's own
// vector registers (4 floats for the generic x86-64 baseline and other CPUs,
// 8 for x86-64-v3, 16 for x86-64-v4), and holds its sixteen lanes in 16 / W
// registers: lane j is element j % W of register j / W. It is compiled for
// each of the three targets, and the best one the CPU supports is chosen once
// (host_width()), so one generic binary runs everywhere.
//
// Each lane does exactly what the scalar code did for its ids, in the same
// order, with the same f32 operations (the build has -ffp-contract=off, so no
// multiply-add is fused on any target): the results are the same bits on
// every target, and the same as before the passes were vectorised.
//
// Why the compiler's vector extensions and not a SIMD library such as Google
// Highway: the sums must come out the same on every machine, so the sixteen
// lanes and their order are fixed whatever the register width, which is
// what these templates spell out; a library's native vectors change their
// lane count with the target, and keeping sixteen lanes over them would be
// this same code around its types. The choice of width is three target
// attributes and one CPU check here, with nothing to link or ship.
#pragma once

#include <cstdint>
#include <cstring>

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && !defined(SAMPLESCOPE_NO_HOST_DISPATCH)
#define SS_HOST_DISPATCH 1
#define SS_TARGET_V3 __attribute__((target("avx2,fma")))
#define SS_TARGET_V4 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")))
#else
#define SS_HOST_DISPATCH 0
#define SS_TARGET_V3
#define SS_TARGET_V4
#endif

namespace samplescope::batch::lanes {

inline constexpr int kLanes = 16;

template <int W>
struct Native;
template <>
struct Native<4> {
    using F = float __attribute__((vector_size(16)));
    using I = std::int32_t __attribute__((vector_size(16)));
};
template <>
struct Native<8> {
    using F = float __attribute__((vector_size(32)));
    using I = std::int32_t __attribute__((vector_size(32)));
};
template <>
struct Native<16> {
    using F = float __attribute__((vector_size(64)));
    using I = std::int32_t __attribute__((vector_size(64)));
};

// W lanes of f64 and of u64 (two or four registers of the same width).
template <int W>
struct Wide;
template <>
struct Wide<4> {
    using D = double __attribute__((vector_size(32)));
    using L = std::uint64_t __attribute__((vector_size(32)));
};
template <>
struct Wide<8> {
    using D = double __attribute__((vector_size(64)));
    using L = std::uint64_t __attribute__((vector_size(64)));
};
template <>
struct Wide<16> {
    using D = double __attribute__((vector_size(128)));
    using L = std::uint64_t __attribute__((vector_size(128)));
};

// The register width the passes run at: the widest this CPU supports (16, 8
// or 4 floats), unless set_host_width() chose a narrower one (the tests run
// every width this CPU has and compare the bits). Returns the width now in use.
int host_width();
int set_host_width(int width);

#define SS_LANE_INLINE [[gnu::always_inline]] inline

template <class V>
SS_LANE_INLINE V load(const float* from) {
    V v;
    std::memcpy(&v, from, sizeof v);
    return v;
}

template <class V, class T>
SS_LANE_INLINE V splat(T x) {
    return V{} + x;
}

// Whether any element of `count` vectors is non-zero.
template <class I>
SS_LANE_INLINE bool any(const I* masks, int count) {
    I folded{};
    for (int k = 0; k < count; ++k) folded |= masks[k];
    std::int32_t elements[sizeof(I) / sizeof(std::int32_t)];
    std::memcpy(elements, &folded, sizeof elements);
    std::int32_t all = 0;
    for (const auto e : elements) all |= e;
    return all != 0;
}

// A bit per lane, set where the lane is negative (a comparison's true):
// each lane keeps its own bit, then halves are folded together with
// shuffles, which every width lowers to a few register operations.
template <int W, class I>
SS_LANE_INLINE std::uint32_t sign_bits(const I& v) {
    std::int32_t weights[W];
    for (int j = 0; j < W; ++j) weights[j] = 1 << j;
    I bits;
    std::memcpy(&bits, weights, sizeof bits);
    bits &= v >> 31;
    if constexpr (W == 16) {
        bits |= __builtin_shufflevector(bits, bits, 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15);
        bits |= __builtin_shufflevector(bits, bits, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7);
        bits |= __builtin_shufflevector(bits, bits, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
        bits |= __builtin_shufflevector(bits, bits, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
    } else if constexpr (W == 8) {
        bits |= __builtin_shufflevector(bits, bits, 4, 5, 6, 7, 4, 5, 6, 7);
        bits |= __builtin_shufflevector(bits, bits, 2, 3, 2, 3, 2, 3, 2, 3);
        bits |= __builtin_shufflevector(bits, bits, 1, 1, 1, 1, 1, 1, 1, 1);
    } else {
        bits |= __builtin_shufflevector(bits, bits, 2, 3, 2, 3);
        bits |= __builtin_shufflevector(bits, bits, 1, 1, 1, 1);
    }
    return static_cast<std::uint32_t>(bits[0]);
}

// order_key() of rank_key.h, lane by lane, with its top bit flipped so that
// signed comparisons give its unsigned order: order_key(v) >= b exactly when
// signed_order_keys(v) >= signed_bound(b). (x86 vectors compare signed only.)
template <class F, class I>
SS_LANE_INLINE I signed_order_keys(const F& v) {
    const F no_negative_zero = v == 0.0f ? F{} : v;
    I bits;
    std::memcpy(&bits, &no_negative_zero, sizeof bits);
    return bits ^ ((bits >> 31) & 0x7FFFFFFF);
}

inline std::int32_t signed_bound(std::uint32_t order_key_bound) {
    return static_cast<std::int32_t>(order_key_bound ^ 0x80000000u);
}

// exp_nonpositive_f32() of fast_select.h, lane by lane, operation for
// operation (n + 127 lies in [1, 127], so the shift never reaches the sign).
template <class F, class I>
SS_LANE_INLINE F exp_nonpositive(const F& x) {
    const F clamped = x < -87.0f ? splat<F>(-87.0f) : x;
    const F n = (clamped * 1.44269504f + 12582912.0f) - 12582912.0f;
    const F r = (clamped - n * 0.693145751953125f) - n * 1.428606765330187e-06f;
    const F poly =
        1.0f + r * (1.0f + r * (0.5f + r * (0.16666667f + r * (0.041666668f + r * (0.008333334f + r * 0.0013888889f)))));
    const I exponent = (__builtin_convertvector(n, I) + 127) << 23;
    F power;
    std::memcpy(&power, &exponent, sizeof power);
    const F scaled = poly * power;
    return x < -87.0f ? F{} : scaled;
}

}  // namespace samplescope::batch::lanes
