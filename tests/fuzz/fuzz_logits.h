// Shared body of the logits fuzz targets: load the input as one format; an
// InputError is the expected answer to a bad file, anything else escaping is a
// finding, and a successful load must be self-consistent.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "engine/base/input_error.h"
#include "engine/io/logits_loader.h"

namespace samplescope::fuzz {

inline void load_logits_or_refuse(const std::uint8_t* data, std::size_t size, LogitsFormat format, LoadOptions options = {}) {
    options.format = format;
    options.memory_limit_bytes = 256u << 20;  // stay inside libFuzzer's default 2 GB RSS limit
    try {
        const LogitsMatrix matrix = load_logits_bytes(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz", options);
        if (matrix.rows == 0 || matrix.cols == 0 || matrix.values.size() != matrix.rows * matrix.cols) std::abort();
        if (!matrix.labels.empty() && matrix.labels.size() != matrix.cols) std::abort();
        for (const double x : matrix.values) {
            if (std::isnan(x) || x == std::numeric_limits<double>::infinity()) std::abort();
        }
    } catch (const InputError&) {
    }
}

}  // namespace samplescope::fuzz
