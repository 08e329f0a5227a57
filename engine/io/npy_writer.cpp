#include "engine/io/npy_writer.h"

#include <fstream>
#include <stdexcept>

namespace samplescope {

namespace {

std::string descr_of(const NpyWriteOptions& options) {
    const char order = options.format.big_endian ? '>' : '<';
    switch (options.format.type) {
        case FloatType::F16: return std::string(1, order) + "f2";
        case FloatType::F32: return std::string(1, order) + "f4";
        case FloatType::F64: return std::string(1, order) + "f8";
        case FloatType::BF16:
            return options.bfloat16_descr == Bfloat16Descr::Void ? std::string("<V2") : std::string(1, order) + "u2";
    }
    return "";
}

}  // namespace

std::string encode_npy(const std::vector<std::uint64_t>& shape, std::span<const double> values,
                       const NpyWriteOptions& options) {
    std::string shape_text = "(";
    std::uint64_t count = 1;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        shape_text += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
        if (i + 1 < shape.size()) shape_text += " ";
        count *= shape[i];
    }
    shape_text += ")";
    if (count != values.size()) throw std::invalid_argument("encode_npy: shape and value count differ");
    std::string header = "{'descr': '" + descr_of(options) + "', 'fortran_order': " +
                         (options.fortran_order ? "True" : "False") + ", 'shape': " + shape_text + ", }";
    // NumPy pads the header with spaces so the data starts on a 64-byte boundary.
    const std::size_t prefix = 10;
    while ((prefix + header.size() + 1) % 64 != 0) header.push_back(' ');
    header.push_back('\n');

    std::string out("\x93NUMPY\x01\x00", 8);
    out.push_back(static_cast<char>(header.size() & 0xFF));
    out.push_back(static_cast<char>(header.size() >> 8));
    out += header;

    ElementFormat format = options.format;
    if (format.type == FloatType::BF16 && options.bfloat16_descr == Bfloat16Descr::Void) format.big_endian = false;
    const std::size_t item = element_size(format.type);
    const std::size_t data_start = out.size();
    out.resize(data_start + values.size() * item);
    auto* data = reinterpret_cast<std::byte*>(out.data() + data_start);
    if (!options.fortran_order || shape.size() < 2) {
        encode_elements(values.data(), values.size(), format, data);
        return out;
    }
    // Fortran order: the first index varies fastest.
    std::vector<std::uint64_t> index(shape.size(), 0);
    for (std::size_t k = 0; k < values.size(); ++k) {
        std::uint64_t c_offset = 0;
        for (std::size_t d = 0; d < shape.size(); ++d) c_offset = c_offset * shape[d] + index[d];
        encode_elements(&values[static_cast<std::size_t>(c_offset)], 1, format, data + k * item);
        for (std::size_t d = 0; d < shape.size(); ++d) {
            if (++index[d] < shape[d]) break;
            index[d] = 0;
        }
    }
    return out;
}

void write_file_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace samplescope
