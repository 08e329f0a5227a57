// The per-format readers behind load_logits_file (one file each). Internal to
// the loader: callers use engine/io/logits_loader.h.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/io/byte_source.h"
#include "engine/io/float_formats.h"
#include "engine/io/logits_loader.h"

namespace samplescope::detail {

LogitsMatrix read_npy(const ByteSource& source, const LoadOptions& options);

// A .npy file's prefix and header: its dtype text, order, shape and where the
// data start. Throws InputError naming the source for a malformed header.
struct NpyHeader {
    std::string descr;
    bool fortran_order = false;
    std::vector<std::uint64_t> shape;
    std::uint64_t data_offset = 0;
};
NpyHeader read_npy_header(const ByteSource& source);
LogitsMatrix read_safetensors(const ByteSource& source, const LoadOptions& options);
std::vector<std::string> safetensors_float_tensors(const ByteSource& source);
LogitsMatrix read_json_logits(const ByteSource& source, const LoadOptions& options);
LogitsMatrix read_text_logits(const ByteSource& source, const LoadOptions& options);
LogitsMatrix parse_text_logits(std::string_view text, const ByteSource& source);

// The largest text or JSON file read whole (a [64, 128256] batch printed as text is ~ 12 MB).
inline constexpr std::uint64_t kTextLimitBytes = 1ull << 30;

// An array of floats at `data_offset` in `source`, stored in C or Fortran
// order with `shape` (1-D: one row; 2-D: [B, V]; 3-D: [B, T, V], of which the
// last position of every batch row is read). Streams the bytes into the
// result, converting on the way; checks the file holds exactly
// `data_bytes` = the array's size, and that the result fits in memory.
struct ArrayLayout {
    std::vector<std::uint64_t> shape;
    ElementFormat format;
    bool fortran_order = false;
    std::uint64_t data_offset = 0;
    std::uint64_t data_bytes = 0;  // bytes the file gives the array
};
// `first_bad` receives the index in the result of the first NaN or +inf
// (kAllFinite when none): the check rides on the conversion, while each piece
// is in cache, and the caller raises it (fail_not_finite) once nothing else
// in the file can fail first, which keeps the errors in their old order.
inline constexpr std::size_t kAllFinite = static_cast<std::size_t>(-1);
LogitsMatrix read_float_array(const ByteSource& source, const ArrayLayout& layout, const LoadOptions& options,
                              std::size_t& first_bad);

// "(2, 3)" for messages.
std::string shape_text(const std::vector<std::uint64_t>& shape);

// Refuses NaN and +inf (the contract's rule for logits), naming row and id.
void check_finite_or_minus_inf(const LogitsMatrix& matrix, const ByteSource& source);
// The same refusal for the value at `index`, found already.
[[noreturn]] void fail_not_finite(const LogitsMatrix& matrix, std::size_t index, const ByteSource& source);

}  // namespace samplescope::detail
