#include "engine/io/float_formats.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace samplescope {

namespace {

template <typename Unsigned>
Unsigned load_unsigned(const std::byte* bytes, bool big_endian) {
    Unsigned value = 0;
    for (std::size_t i = 0; i < sizeof(Unsigned); ++i) {
        const std::size_t shift = 8 * (big_endian ? sizeof(Unsigned) - 1 - i : i);
        value = static_cast<Unsigned>(value | (static_cast<Unsigned>(std::to_integer<unsigned>(bytes[i])) << shift));
    }
    return value;
}

template <typename Unsigned>
void store_unsigned(Unsigned value, bool big_endian, std::byte* bytes) {
    for (std::size_t i = 0; i < sizeof(Unsigned); ++i) {
        const std::size_t shift = 8 * (big_endian ? sizeof(Unsigned) - 1 - i : i);
        bytes[i] = static_cast<std::byte>((value >> shift) & 0xFFu);
    }
}

}  // namespace

std::size_t element_size(FloatType type) {
    switch (type) {
        case FloatType::F16:
        case FloatType::BF16: return 2;
        case FloatType::F32: return 4;
        case FloatType::F64: return 8;
    }
    return 0;
}

const char* float_type_name(FloatType type) {
    switch (type) {
        case FloatType::F16: return "f16";
        case FloatType::BF16: return "bf16";
        case FloatType::F32: return "f32";
        case FloatType::F64: return "f64";
    }
    return "?";
}

double half_bits_to_double(std::uint16_t bits) {
    const bool negative = (bits & 0x8000u) != 0;
    const int exponent = (bits >> 10) & 0x1F;
    const int mantissa = bits & 0x3FF;
    double magnitude;
    if (exponent == 0x1F) {
        magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    } else if (exponent == 0) {
        magnitude = std::ldexp(static_cast<double>(mantissa), -24);  // subnormal
    } else {
        magnitude = std::ldexp(static_cast<double>(mantissa | 0x400), exponent - 25);
    }
    return negative ? -magnitude : magnitude;
}

double bfloat16_bits_to_double(std::uint16_t bits) {
    // bf16 is the top half of an f32.
    return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16));
}

std::uint16_t double_to_half_bits(double value) {
    const std::uint16_t sign = std::signbit(value) ? 0x8000u : 0u;
    if (std::isnan(value)) return 0x7E00u;
    const double magnitude = std::fabs(value);
    if (magnitude >= 65520.0) return static_cast<std::uint16_t>(sign | 0x7C00u);  // rounds past the largest half
    if (magnitude < std::ldexp(1.0, -14)) {
        // Subnormal: a multiple of 2^-24; nearbyint rounds ties to even.
        const auto units = static_cast<std::uint16_t>(std::nearbyint(std::ldexp(magnitude, 24)));
        return static_cast<std::uint16_t>(sign | units);  // 1024 units carries into the smallest normal
    }
    int exponent = 0;
    const double fraction = std::frexp(magnitude, &exponent);  // magnitude = fraction * 2^exponent, fraction in [0.5, 1)
    auto significand = static_cast<std::uint32_t>(std::nearbyint(std::ldexp(fraction, 11)));  // 11 bits with the hidden one
    if (significand == 2048) {
        significand = 1024;
        ++exponent;
    }
    const auto biased = static_cast<std::uint32_t>(exponent - 1 + 15);
    if (biased >= 31) return static_cast<std::uint16_t>(sign | 0x7C00u);
    return static_cast<std::uint16_t>(sign | (biased << 10) | (significand & 0x3FFu));
}

std::uint16_t double_to_bfloat16_bits(double value) {
    if (std::isnan(value)) return std::signbit(value) ? 0xFFC0u : 0x7FC0u;
    // Through f32 first would round twice; instead round the double to 8
    // significant bits directly, then read the f32 pattern of the exact result.
    const double magnitude = std::fabs(value);
    const std::uint16_t sign = std::signbit(value) ? 0x8000u : 0u;
    if (magnitude == 0.0) return sign;
    const double smallest_normal = std::ldexp(1.0, -126);
    double rounded;
    if (magnitude < smallest_normal) {
        rounded = std::ldexp(std::nearbyint(std::ldexp(magnitude, 133)), -133);  // bf16 subnormals step 2^-133
    } else {
        int exponent = 0;
        const double fraction = std::frexp(magnitude, &exponent);
        rounded = std::ldexp(std::nearbyint(std::ldexp(fraction, 8)), exponent - 8);
    }
    if (rounded >= std::ldexp(1.0, 128)) return static_cast<std::uint16_t>(sign | 0x7F80u);
    const auto bits = std::bit_cast<std::uint32_t>(static_cast<float>(rounded));  // exact: 8 significant bits
    return static_cast<std::uint16_t>(sign | (bits >> 16));
}

namespace {

constexpr std::uint16_t swap_bytes(std::uint16_t v) { return static_cast<std::uint16_t>((v >> 8) | (v << 8)); }
constexpr std::uint32_t swap_bytes(std::uint32_t v) {
    return (v >> 24) | ((v >> 8) & 0xFF00u) | ((v << 8) & 0xFF0000u) | (v << 24);
}
constexpr std::uint64_t swap_bytes(std::uint64_t v) {
    return (std::uint64_t{swap_bytes(static_cast<std::uint32_t>(v))} << 32) | swap_bytes(static_cast<std::uint32_t>(v >> 32));
}

// One element's bits in the host's order: a memcpy (no alignment needed)
// and a swap only when the file's order differs.
template <typename Unsigned, bool kBigEndian>
Unsigned load_word(const std::byte* bytes) {
    Unsigned value;
    std::memcpy(&value, bytes, sizeof value);
    if constexpr (kBigEndian != (std::endian::native == std::endian::big)) value = swap_bytes(value);
    return value;
}

// half_bits_to_double without branches or ldexp, so the loop vectorises:
// integer steps build the f32 of the same value, which widens exactly. A
// normal half is the f32 with its exponent rebiased (15 -> 127); inf and NaN
// are rebiased once more, to the f32 exponent 255, their mantissa keeping NaN
// apart from inf; a subnormal half, mantissa * 2^-24, comes out of an exact
// f32 subtraction of normals, (2^-14 + mantissa * 2^-24) - 2^-14, so no
// subnormal f32 is made (flush-to-zero modes cannot touch it). A NaN keeps
// its sign but not the quiet pattern of half_bits_to_double: the loaders
// refuse any NaN, and tests/loaders/test_float_formats.cpp checks every one of the
// 65,536 patterns against half_bits_to_double.
inline double half_to_double_branchless(std::uint16_t bits) {
    const std::uint32_t magnitude = bits & 0x7FFFu;
    const std::uint32_t exponent = magnitude & 0x7C00u;
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
    // All-ones masks rather than ?: , which GCC would not if-convert here.
    const std::uint32_t is_special = 0u - static_cast<std::uint32_t>(exponent == 0x7C00u);
    const std::uint32_t is_subnormal = 0u - static_cast<std::uint32_t>(exponent == 0);
    const std::uint32_t rebiased = (magnitude << 13) + 0x38000000u + (is_special & 0x38000000u);
    const float subnormal = std::bit_cast<float>((magnitude << 13) + 0x38800000u) - 0x1p-14f;
    const std::uint32_t f32 = (std::bit_cast<std::uint32_t>(subnormal) & is_subnormal) | (rebiased & ~is_subnormal);
    return static_cast<double>(std::bit_cast<float>(f32 | sign));
}

// Plain loops, one per type and byte order, with nothing per element that
// stops GCC's vectoriser (a run-time byte order or a call did; checked with
// -fopt-info-vec): this is the hot path of a large .npy or .safetensors file.
template <bool kBigEndian>
void decode_as(const std::byte* bytes, std::size_t count, FloatType type, double* out) {
    switch (type) {
        case FloatType::F16:
            for (std::size_t i = 0; i < count; ++i) {
                out[i] = half_to_double_branchless(load_word<std::uint16_t, kBigEndian>(bytes + i * 2));
            }
            return;
        case FloatType::BF16:
            // bf16 is the top half of an f32.
            for (std::size_t i = 0; i < count; ++i) {
                const auto high = static_cast<std::uint32_t>(load_word<std::uint16_t, kBigEndian>(bytes + i * 2)) << 16;
                out[i] = static_cast<double>(std::bit_cast<float>(high));
            }
            return;
        case FloatType::F32:
            for (std::size_t i = 0; i < count; ++i) {
                out[i] = static_cast<double>(std::bit_cast<float>(load_word<std::uint32_t, kBigEndian>(bytes + i * 4)));
            }
            return;
        case FloatType::F64:
            if (kBigEndian == (std::endian::native == std::endian::big)) {
                std::memcpy(out, bytes, count * 8);
                return;
            }
            for (std::size_t i = 0; i < count; ++i) {
                out[i] = std::bit_cast<double>(load_word<std::uint64_t, kBigEndian>(bytes + i * 8));
            }
            return;
    }
}

}  // namespace

void decode_elements(const std::byte* bytes, std::size_t count, ElementFormat format, double* out) {
    if (format.big_endian) {
        decode_as<true>(bytes, count, format.type, out);
    } else {
        decode_as<false>(bytes, count, format.type, out);
    }
}

void encode_elements(const double* values, std::size_t count, ElementFormat format, std::byte* out) {
    const std::size_t size = element_size(format.type);
    for (std::size_t i = 0; i < count; ++i) {
        std::byte* at = out + i * size;
        switch (format.type) {
            case FloatType::F16: store_unsigned(double_to_half_bits(values[i]), format.big_endian, at); break;
            case FloatType::BF16: store_unsigned(double_to_bfloat16_bits(values[i]), format.big_endian, at); break;
            case FloatType::F32:
                store_unsigned(std::bit_cast<std::uint32_t>(static_cast<float>(values[i])), format.big_endian, at);
                break;
            case FloatType::F64: store_unsigned(std::bit_cast<std::uint64_t>(values[i]), format.big_endian, at); break;
        }
    }
}

}  // namespace samplescope
