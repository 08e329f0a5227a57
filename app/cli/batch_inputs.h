// The inputs shared by `samplescope-cli batch` and `compare`: a [B, V] logits
// file (or a generated batch) and a params JSON file with one object per row.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/json/params_json.h"
#include "kernels/batch_engine.h"

namespace samplescope::cli {

struct BatchFlags {
    std::string logits_file;
    std::string params_file;
    std::string generate;  // "B,V"
    std::string workload = "mixed";
    std::string generate_seed;  // as typed; empty: 0
    std::string mode = "exact";
    std::string threads;        // as typed; empty: 0 (every hardware thread)
    std::string max_memory;     // as typed; empty: the default budget
};

void add_batch_flags(CLI::App& app, BatchFlags& flags);

// Owns the logits and the per-row requests that a BatchInput points into.
struct LoadedBatch {
    std::size_t rows = 0;
    std::size_t vocab = 0;
    std::vector<float> logits;
    std::vector<RowRequest> requests;
    std::string source;  // the file, or "generated B x V (workload, seed)"
    batch::BatchInput input() const { return batch::make_batch_input(logits.data(), rows, vocab, requests); }
};

// Host twin threads the engine may start at most.
inline constexpr unsigned kMaxThreads = 1024;

// --threads, checked: 0 (every hardware thread) to kMaxThreads.
unsigned batch_threads(const BatchFlags& flags);

// Throws InputError naming the file or flag. `draws_per_row` draws follow each
// row's skip_draws (the draw counter must hold them) and the whole run must fit
// the memory budget.
LoadedBatch load_batch(const BatchFlags& flags, std::uint64_t draws_per_row = 1);

}  // namespace samplescope::cli
