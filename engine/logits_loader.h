// Loading logits from files: the one loader module the CLI and the GUI share.
// Every failure is an InputError whose message names the file and the problem.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace samplescope {

struct LogitsMatrix {
    std::size_t rows = 0;
    std::size_t cols = 0;               // V
    std::vector<double> values;         // rows x cols, row-major
    std::vector<std::string> labels;    // token labels when the file carries them, else empty

    std::vector<double> row(std::size_t r) const {
        return {values.begin() + static_cast<std::ptrdiff_t>(r * cols),
                values.begin() + static_cast<std::ptrdiff_t>((r + 1) * cols)};
    }
};

// Chooses the format by extension (.npy, .json), else plain text / CSV / TSV.
LogitsMatrix load_logits_file(const std::string& path);

// Parses text already in memory: numbers separated by commas, tabs, spaces or
// newlines, or one `label<TAB or colon>logit` per line. `source` names it in errors.
LogitsMatrix parse_logits_text(const std::string& text, const std::string& source);

}  // namespace samplescope
