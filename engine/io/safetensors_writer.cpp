#include "engine/io/safetensors_writer.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace samplescope {

const char* safetensors_dtype_name(FloatType type) {
    switch (type) {
        case FloatType::F16: return "F16";
        case FloatType::BF16: return "BF16";
        case FloatType::F32: return "F32";
        case FloatType::F64: return "F64";
    }
    return "?";
}

std::string encode_safetensors(const std::vector<SafetensorsTensor>& tensors) {
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    std::string data;
    for (const auto& tensor : tensors) {
        std::uint64_t count = 1;
        for (const auto dim : tensor.shape) count *= dim;
        const bool ids = !tensor.ids.empty();
        if (count != (ids ? tensor.ids.size() : tensor.values.size())) {
            throw std::invalid_argument("encode_safetensors: shape and value count differ for " + tensor.name);
        }
        const std::size_t begin = data.size();
        if (ids) {
            for (const auto id : tensor.ids) {
                const auto bits = static_cast<std::uint64_t>(id);
                for (int b = 0; b < 8; ++b) data.push_back(static_cast<char>((bits >> (8 * b)) & 0xFF));
            }
        } else {
            data.resize(begin + tensor.values.size() * element_size(tensor.type));
            encode_elements(tensor.values.data(), tensor.values.size(), {tensor.type, false},
                            reinterpret_cast<std::byte*>(data.data() + begin));
        }
        header[tensor.name] = {{"dtype", ids ? "I64" : safetensors_dtype_name(tensor.type)},
                               {"shape", tensor.shape},
                               {"data_offsets", {begin, data.size()}}};
    }
    std::string text = header.dump();
    while (text.size() % 8 != 0) text.push_back(' ');  // the format pads the header to 8 bytes
    std::string out;
    for (int b = 0; b < 8; ++b) out.push_back(static_cast<char>((static_cast<std::uint64_t>(text.size()) >> (8 * b)) & 0xFF));
    return out + text + data;
}

}  // namespace samplescope
