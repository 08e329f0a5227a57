// The batch a Compare view works on: [B, V] f32 logits (loaded from a file or
// generated) and one request per row. No Qt: the loading rules are the batch
// engine's, so they can be tested and reused without a window.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/json/params_json.h"
#include "kernels/batch_engine.h"
#include "kernels/tools/batch_generate.h"

namespace samplescope {

struct CompareBatch {
    std::size_t rows = 0;
    std::size_t vocab = 0;
    // Shared, never changed after loading: a run in flight keeps its own reference.
    std::shared_ptr<const std::vector<float>> logits;
    std::vector<RowRequest> requests;  // one per row, every one with a seed
    std::string source;                // the file(s), or "generated B x V (workload, seed S)"
    std::string source_name;           // the same with file names only, for a status line

    bool empty() const { return rows == 0; }
    // Points into `logits`; the batch must outlive the input.
    batch::BatchInput input() const;
    // Row r widened to f64, as the reference reads it.
    std::vector<double> rowLogits(std::size_t row) const;
};

// A [B, V] logits file (any format load_logits_file reads) and, when
// params_path is not empty, its params JSON file; rows without a params file
// get the defaults. Throws InputError naming the file and the problem.
CompareBatch loadCompareBatch(const std::string& logits_path, const std::string& params_path = {});

// kernels/batch_generate's deterministic batch. Throws InputError when B or V
// is 0 or the batch would hold more than kMaxGeneratedLogits logits.
inline constexpr std::size_t kMaxGeneratedLogits = std::size_t{1} << 27;
CompareBatch generateCompareBatch(std::size_t rows, std::size_t vocab, batch::Workload workload, std::uint64_t seed);

// Refuses history ids outside [0, V), naming the params file and the row.
void checkHistories(const std::vector<RowRequest>& requests, std::size_t vocab, const std::string& params_path);

// Chooses a seed for every row without one, so a run can be replayed and a row
// opened elsewhere draws what it drew here.
void seedEveryRow(std::vector<RowRequest>& requests);

}  // namespace samplescope
