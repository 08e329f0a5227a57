// The element types logits arrive in (f16, bf16, f32, f64, either byte order)
// and their exact conversion to and from double. Every f16, bf16 and f32 value
// is exactly representable as a double, so decoding never rounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace samplescope {

enum class FloatType { F16, BF16, F32, F64 };

struct ElementFormat {
    FloatType type = FloatType::F32;
    bool big_endian = false;
};

std::size_t element_size(FloatType type);
// "f16", "bf16", "f32", "f64".
const char* float_type_name(FloatType type);

double half_bits_to_double(std::uint16_t bits);
double bfloat16_bits_to_double(std::uint16_t bits);
// Round to nearest, ties to even; overflow gives +-inf, NaN stays NaN.
std::uint16_t double_to_half_bits(double value);
std::uint16_t double_to_bfloat16_bits(double value);

// Decodes `count` elements stored back to back at `bytes` into `out`.
void decode_elements(const std::byte* bytes, std::size_t count, ElementFormat format, double* out);
// Encodes `count` doubles into `out` (count * element_size bytes), rounding to the type.
void encode_elements(const double* values, std::size_t count, ElementFormat format, std::byte* out);

}  // namespace samplescope
