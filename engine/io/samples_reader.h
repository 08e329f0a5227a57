// Reading a sampler's draws: token ids, one row of N per logits row. The
// verifier (engine/stats/verification.h) checks them against the exact q.
//
// Formats:
//   .npy   int32 or int64 (either byte order), [N] (one row) or [B, N], C or Fortran order
//   text   one id a line (one row), or one row a line with ids separated by
//          commas, spaces or tabs (rows may differ in length); '#' starts a comment
// Every failure is an InputError whose one-line message names the file and the problem.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace samplescope {

struct SampleRows {
    std::vector<std::vector<std::int64_t>> rows;  // rows[r] = the draws for logits row r
    std::size_t total() const {
        std::size_t n = 0;
        for (const auto& r : rows) n += r.size();
        return n;
    }
};

// By extension: .npy, anything else text.
SampleRows load_samples_file(const std::string& path);

// The same from bytes in memory; `source` names them in errors (and ".npy"
// at its end picks the binary format).
SampleRows load_samples_bytes(std::string_view bytes, const std::string& source);

// Text already in memory; `source` names it in errors.
SampleRows parse_samples_text(std::string_view text, const std::string& source);

}  // namespace samplescope
