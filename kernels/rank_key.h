// Keys that turn the contract's ranking (logit descending, then id ascending)
// into plain unsigned comparisons, so radix and threshold selection can replace
// a sort. Shared by the host twin and the CUDA kernels.
#pragma once

#include <cstdint>
#include <cstring>

#include "engine/base/portable.h"

namespace samplescope::batch {

SS_HD inline std::uint32_t float_bits(float v) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(v);
#else
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return bits;
#endif
}

SS_HD inline float bits_float(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
#endif
}

// A 32-bit key whose unsigned order is the float order (-0 is read as +0, so
// the two zeros tie as they do in the reference's f64 comparisons).
SS_HD inline std::uint32_t order_key(float v) {
    const std::uint32_t bits = float_bits(v == 0.0f ? 0.0f : v);
    return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

SS_HD inline float key_float(std::uint32_t key) { return bits_float((key & 0x80000000u) ? (key & 0x7FFFFFFFu) : ~key); }

// Logit in the high half, the complement of the id in the low half: a larger
// rank key ranks first, and no two ids share one.
SS_HD inline std::uint64_t rank_key(float v, std::int32_t id) {
    return (static_cast<std::uint64_t>(order_key(v)) << 32) | static_cast<std::uint32_t>(~static_cast<std::uint32_t>(id));
}

SS_HD inline float rank_key_value(std::uint64_t key) { return key_float(static_cast<std::uint32_t>(key >> 32)); }
SS_HD inline std::int32_t rank_key_id(std::uint64_t key) {
    return static_cast<std::int32_t>(~static_cast<std::uint32_t>(key & 0xFFFFFFFFu));
}

// The smallest rank key whose logit is at least v: every id with logit >= v
// has a key >= this (the min-p floor as a rank-key threshold).
SS_HD inline std::uint64_t lowest_rank_key_at_least(float v) { return static_cast<std::uint64_t>(order_key(v)) << 32; }

}  // namespace samplescope::batch
