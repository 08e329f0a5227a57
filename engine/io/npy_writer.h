// Writes .npy files (format version 1.0): what the tests, the example data and
// the benchmark read back, and a way for users to export a row.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/io/float_formats.h"

namespace samplescope {

enum class Bfloat16Descr {
    Void,    // '<V2': what np.save writes for an ml_dtypes bfloat16 array
    Uint16,  // '<u2' / '>u2': the raw bits as uint16 (read back with u2_as_bfloat16)
};

struct NpyWriteOptions {
    ElementFormat format;
    bool fortran_order = false;
    Bfloat16Descr bfloat16_descr = Bfloat16Descr::Void;
};

// `values` are in C (row-major) order for `shape`; the file stores them in the
// order the options ask for.
std::string encode_npy(const std::vector<std::uint64_t>& shape, std::span<const double> values,
                       const NpyWriteOptions& options = {});

// Writes bytes to a file; throws std::runtime_error naming the path on failure.
void write_file_bytes(const std::string& path, const std::string& bytes);

}  // namespace samplescope
