// Loading logits from files: the one loader module the CLI and the GUI share.
// Every failure is an InputError whose message is one line naming the file and
// the problem; loading returns a new object, so a failed load leaves whatever
// the caller held untouched.
//
// Formats (docs/loaders.md has the full list and every error):
//   .npy          f16/bf16/f32/f64, either byte order, C or Fortran order, 1-D, 2-D [B, V]
//                 or 3-D [B, T, V] (the last position of each batch row)
//   .safetensors  F16/BF16/F32/F64, same shapes; one tensor picked by name
//   .json         an array, an array of arrays, or {"logits": ..., "tokens": [...]}
//   anything else plain text, CSV or TSV: numbers (one row per line), or `label<TAB or colon>logit` lines
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace samplescope {

class ByteSource;

struct LogitsMatrix {
    std::size_t rows = 0;
    std::size_t cols = 0;               // V
    std::vector<double> values;         // rows x cols, row-major
    std::vector<std::string> labels;    // token labels when the file carries them, else empty
    // Token ids the file carries next to the logits (a .safetensors tensor or a
    // JSON key "prompt_ids" / "output_ids"); empty when it has none.
    std::vector<std::int64_t> prompt_ids;
    std::vector<std::int64_t> output_ids;
    std::vector<std::string> notes;     // what was chosen for the user (the tensor, the position taken)

    std::vector<double> row(std::size_t r) const {
        return {values.begin() + static_cast<std::ptrdiff_t>(r * cols),
                values.begin() + static_cast<std::ptrdiff_t>((r + 1) * cols)};
    }
};

enum class LogitsFormat { Auto, Npy, Safetensors, Json, Text };

struct LoadOptions {
    LogitsFormat format = LogitsFormat::Auto;  // Auto: by extension, else by the first bytes
    std::string tensor;                        // .safetensors: the tensor to load ("" = the only one, or "logits")
    bool u2_as_bfloat16 = false;               // .npy: read uint16 data (<u2, >u2) as bfloat16 bits
    // How the refusal of uint16 data names the option above: the CLI's flag
    // by default; a GUI names its own control.
    std::string u2_as_bfloat16_option = "--u2-as-bf16 (LoadOptions::u2_as_bfloat16)";
    // Refuse a file whose values would need more than this many bytes as
    // doubles; 0 means the machine's physical memory.
    std::uint64_t memory_limit_bytes = 0;
    // A 3-D [B, T, V] array (.npy, .safetensors): read every position of this
    // batch row as T rows (a recorded generation), instead of the last
    // position of each batch row.
    std::optional<std::uint64_t> all_positions_of;
};

// Chooses the format by extension (.npy, .safetensors, .json), else by the
// first bytes, else plain text / CSV / TSV.
LogitsMatrix load_logits_file(const std::string& path);
LogitsMatrix load_logits_file(const std::string& path, const LoadOptions& options);

// The float tensors of a .safetensors file, read from its header only, sorted by
// name: the names LoadOptions::tensor can take (a GUI offers them when
// there are several). Throws InputError when the header cannot be read.
std::vector<std::string> safetensors_float_tensors(const std::string& path);

// The same from bytes in memory; `source` names them in errors (and its
// extension picks the format when options.format is Auto).
LogitsMatrix load_logits_bytes(std::string_view bytes, const std::string& source, const LoadOptions& options = {});

// Parses text already in memory: numbers separated by commas, tabs, spaces or
// newlines, or one `label<TAB or colon>logit` per line. `source` names it in errors.
LogitsMatrix parse_logits_text(const std::string& text, const std::string& source);

// The loader's own name for a format ("npy", "safetensors", "json", "text").
const char* logits_format_name(LogitsFormat format);

}  // namespace samplescope
