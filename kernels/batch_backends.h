// The two backends behind run_batch(). Each fills one RowResult per row and
// draw ([rows, draws]) and, when asked, the kept mask ([rows, vocab], zeroed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/batch_engine.h"

namespace samplescope::batch {

// Threads over rows; returns how many threads ran.
unsigned run_host(const BatchInput& input, const BatchOptions& options, std::vector<RowResult>& results,
                  std::vector<std::uint8_t>& mask);

struct CudaProbe {
    bool compiled = false;   // built with nvcc
    bool available = false;  // a device answered
    std::string device;      // its name
    std::string reason;      // why not, when not
};
CudaProbe probe_cuda();

// Throws std::runtime_error naming the CUDA call and its error when one fails.
void run_cuda(const BatchInput& input, const BatchOptions& options, std::vector<RowResult>& results,
              std::vector<std::uint8_t>& mask);

}  // namespace samplescope::batch
