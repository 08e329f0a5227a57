// Deterministic synthetic batches: the same (rows, V, workload, seed) gives the
// same logits and parameters on every machine, for the CLI's --generate, the
// benchmarks and the tests.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/json/params_json.h"
#include "kernels/batch_engine.h"

namespace samplescope::batch {

enum class Workload {
    Mixed,       // every kind of row: greedy, each stage alone and together, -inf ids, ties, k >= V, p = 0
    EveryStage,  // penalties over 1,000-id histories, T = 0.7, k = 50, p = 0.9, m = 0.05
    TopPOnly,    // p = 0.9
    Greedy,      // T = 0
};

std::string_view workload_name(Workload workload);
Workload parse_workload(std::string_view text);  // throws InputError

struct SyntheticBatch {
    std::size_t rows = 0;
    std::size_t vocab = 0;
    std::vector<float> logits;             // [rows, vocab]
    std::vector<RowRequest> requests;      // one per row
    BatchInput input() const { return make_batch_input(logits.data(), rows, vocab, requests); }
};

SyntheticBatch generate_batch(std::size_t rows, std::size_t vocab, Workload workload, std::uint64_t seed = 0);

}  // namespace samplescope::batch
