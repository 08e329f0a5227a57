// The CUDA backend's interface, in C++17 so nvcc can compile its side: plain
// host arrays in, one RowResult per row and draw out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/row_params.h"

namespace samplescope::batch {

struct CudaProbe {
    bool compiled = false;   // built with nvcc
    bool available = false;  // a device answered
    std::string device;      // its name
    std::string reason;      // why not, when not
};
CudaProbe probe_cuda();

struct CudaBatch {
    std::int64_t rows = 0;
    std::int64_t vocab = 0;
    const float* logits = nullptr;  // host memory unless logits_on_device
    bool logits_on_device = false;
    const RowParams* params = nullptr;  // [rows]
    const std::int64_t* prompt_offsets = nullptr;  // [rows + 1]
    const std::int32_t* prompt_ids = nullptr;
    const std::int64_t* output_offsets = nullptr;
    const std::int32_t* output_ids = nullptr;
    bool fast = true;
    bool kept_mask = false;
    std::int32_t draws = 1;
};

// Throws std::runtime_error naming the CUDA call and its error when one fails.
void run_cuda(const CudaBatch& batch, std::vector<RowResult>& results, std::vector<std::uint8_t>& mask);

}  // namespace samplescope::batch
