// The fast mode's selection constants and per-element rules, shared by the host
// twin and the CUDA kernel: a weighted radix select over rank keys finds the
// shortest rank-ordered prefix whose weight reaches a target. Top-k is that with
// weight 1 and target k; top-p with weight exp((l - M) / T) and target p x Z.
// Neither sorts the row: each level histograms one 11-bit digit of the key,
// and once the undecided bucket holds at most kCandidateCapacity ids, those few
// are collected and ordered.
#pragma once

#include <cmath>
#include <cstdint>

#include "engine/base/portable.h"
#include "kernels/rank_key.h"

namespace samplescope::batch {

inline constexpr int kDigitBits = 11;
inline constexpr int kDigitBuckets = 1 << kDigitBits;
inline constexpr int kSelectLevels = 6;  // 5 x 11 + 9 = 64 bits
inline constexpr int kCandidateCapacity = 2048;

// Level l examines bits [shift, shift + width) of the rank key.
SS_HD inline int digit_shift(int level) { return level < kSelectLevels - 1 ? 64 - kDigitBits * (level + 1) : 0; }
SS_HD inline int digit_width(int level) { return level < kSelectLevels - 1 ? kDigitBits : 64 - kDigitBits * level; }
SS_HD inline std::uint32_t key_digit(std::uint64_t key, int level) {
    return static_cast<std::uint32_t>((key >> digit_shift(level)) & ((1ULL << digit_width(level)) - 1));
}

// The range of keys of bucket `digit` at `level`, inside the range [lo, hi] of
// the previous level's chosen bucket.
SS_HD inline std::uint64_t bucket_low(std::uint64_t hi, int level, std::uint32_t digit) {
    const int top = digit_shift(level) + digit_width(level);
    const std::uint64_t prefix = top >= 64 ? 0 : (hi >> top) << top;
    return prefix | (static_cast<std::uint64_t>(digit) << digit_shift(level));
}
SS_HD inline std::uint64_t bucket_high(std::uint64_t hi, int level, std::uint32_t digit) {
    const int shift = digit_shift(level);
    return bucket_low(hi, level, digit) | (shift == 0 ? 0 : ((1ULL << shift) - 1));
}

// A penalised f64 logit as the f32 fast path holds it: finite values beyond the
// f32 range saturate rather than become infinite.
SS_HD inline float penalised_f32(double x) {
    if (x != x || x == HUGE_VAL || x == -HUGE_VAL) return static_cast<float>(x);
    const double limit = 3.4028234663852886e38;
    return static_cast<float>(x > limit ? limit : (x < -limit ? -limit : x));
}

// The lowest key of any finite logit: -inf ids fall below it and are never kept.
SS_HD inline std::uint64_t lowest_finite_key() { return lowest_rank_key_at_least(-3.402823466e38f); }

// A kept token's weight in top-p's mass: exp((l - M) / T) in f32.
// exp for x <= 0 in f32, branch-free so the host compiler vectorises it (the
// C library's expf is a scalar call): 2^n x exp(r) with n = round(x / ln 2), a
// two-part ln 2 (Cody-Waite) and a degree-6 polynomial; relative error about
// 2e-7, ample for f32 masses compared under the near-tie rule. Results below
// e^-87 flush to 0.
SS_HD inline float exp_nonpositive_f32(float x) {
    const float clamped = x < -87.0f ? -87.0f : x;
    const float n = (clamped * 1.44269504f + 12582912.0f) - 12582912.0f;  // round to nearest
    const float r = (clamped - n * 0.693145751953125f) - n * 1.428606765330187e-06f;
    const float poly =
        1.0f + r * (1.0f + r * (0.5f + r * (0.16666667f + r * (0.041666668f + r * (0.008333334f + r * 0.0013888889f)))));
    const auto exponent = static_cast<std::uint32_t>(static_cast<std::int32_t>(n) + 127) << 23;
    const float scaled = poly * bits_float(exponent);
    return x < -87.0f ? 0.0f : scaled;
}

// The maximum weighs exactly 1 even when 1 / T overflows to inf.
SS_HD inline float mass_weight(float logit, float max_logit, float inverse_temperature) {
    const float gap = logit - max_logit;
    return gap == 0.0f ? 1.0f : exp_nonpositive_f32(gap * inverse_temperature);
}

// Min-p in log space: q >= min_p x max q over the kept set is
// (l - M) / T >= log(min_p), i.e. l >= M + T log(min_p). The largest logit is
// always kept, so M is the row's maximum. Returned as a rank-key threshold.
SS_HD inline std::uint64_t min_p_threshold(float max_logit, double temperature, double min_p) {
    const double floor = static_cast<double>(max_logit) + temperature * ::log(min_p);
    if (!(floor > -3.402823466e38)) return lowest_finite_key();
    float f = static_cast<float>(floor);
    if (static_cast<double>(f) < floor) f = ::nextafterf(f, 3.402823466e38f);
    return lowest_rank_key_at_least(f);
}

}  // namespace samplescope::batch
