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

// What holding `draws` draws in `rows` rows takes while they are read from a
// text of `text_bytes` bytes (0 for .npy) and then verified: 8 bytes a draw
// held, 8 more for the verifier's sorted copy of a row, each row's own
// vector, and the text itself. A bound, measured in docs/verify.md.
std::uint64_t samples_memory_estimate(std::uint64_t draws, std::uint64_t rows, std::uint64_t text_bytes);

// By extension: .npy, anything else text. `memory_budget` bytes
// (engine/base/memory_budget.h) bound `held` (what the run holds already: the
// logits) plus samples_memory_estimate, checked before the file is read and
// again, with the draws counted, before they are stored:
// InputError("max-memory") when it passes.
SampleRows load_samples_file(const std::string& path, std::uint64_t memory_budget = UINT64_MAX,
                             std::uint64_t held = 0);

// The same from bytes in memory; `source` names them in errors (and ".npy"
// at its end picks the binary format).
SampleRows load_samples_bytes(std::string_view bytes, const std::string& source,
                              std::uint64_t memory_budget = UINT64_MAX, std::uint64_t held = 0);

// Text already in memory; `source` names it in errors. Two passes: the first
// checks every id and counts them, the second stores them in vectors of
// exactly their size (a draw costs 8 bytes, whatever the layout).
SampleRows parse_samples_text(std::string_view text, const std::string& source,
                              std::uint64_t memory_budget = UINT64_MAX, std::uint64_t held = 0);

}  // namespace samplescope
