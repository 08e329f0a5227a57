// Writes .safetensors files: float tensors (F16/BF16/F32/F64) and integer id
// tensors (I64), as the example dumps and the tests need them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/io/float_formats.h"

namespace samplescope {

struct SafetensorsTensor {
    std::string name;
    std::vector<std::uint64_t> shape;
    std::vector<double> values;        // float tensors, C order
    FloatType type = FloatType::F32;
    std::vector<std::int64_t> ids;     // when non-empty, an I64 tensor instead
};

// "F16", "BF16", "F32", "F64".
const char* safetensors_dtype_name(FloatType type);

std::string encode_safetensors(const std::vector<SafetensorsTensor>& tensors);

}  // namespace samplescope
