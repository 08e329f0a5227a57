// The two backends behind run_batch(). Each fills one RowResult per row and
// draw ([rows, draws]) and, when asked, the kept mask ([rows, vocab], zeroed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/batch_engine.h"
#include "kernels/cuda_backend.h"

namespace samplescope::batch {

// Threads over rows; returns how many threads ran. Rows whose logits the
// contract refuses come back with RowError::RefusedLogit or NoFiniteLogit.
// `row_reads`, when given, receives fast mode's full reads of a row, all rows together.
unsigned run_host(const BatchInput& input, const BatchOptions& options, std::vector<RowResult>& results,
                  std::vector<std::uint8_t>& mask, std::uint64_t* row_reads = nullptr);

// Hands the batch to the CUDA backend (kernels/cuda_backend.h).
// Returns the kernels' own time in seconds.
double run_cuda_batch(const BatchInput& input, const BatchOptions& options, std::vector<RowResult>& results,
                      std::vector<std::uint8_t>& mask);

}  // namespace samplescope::batch
