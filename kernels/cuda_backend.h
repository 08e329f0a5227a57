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
// Asked of the driver once per process; later calls return the same answer.
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
    // A cudaStream_t to run on; null: the backend's own stream. Every copy and
    // launch of the call is enqueued on it (after the work the caller has
    // already put there, such as the kernel that wrote device logits), and
    // run_cuda waits for it once, at the end.
    void* stream = nullptr;
};

// Throws std::runtime_error naming the CUDA call and its error when one fails.
// Returns the kernels' own time in seconds (CUDA events on the stream), without
// transfers. Batches run one at a time (a process-wide lock) in device buffers
// and pinned host buffers kept from one call to the next, grown when a batch
// needs more.
double run_cuda(const CudaBatch& batch, std::vector<RowResult>& results, std::vector<std::uint8_t>& mask);

// Frees what run_cuda keeps (device buffers, pinned staging, its stream and
// events); the next run makes them again. They are also freed at exit.
void cuda_release();

// How many device and pinned buffers run_cuda has allocated in this process
// (0 without a GPU): a second batch no larger than the first adds none.
std::uint64_t cuda_buffer_allocations();

// For benchmarks and callers whose logits already live on the GPU: a device
// copy of host floats (freed with cuda_free), and the device's copy bandwidth
// in bytes per second, measured by device-to-device copies of `bytes` bytes.
float* cuda_upload(const float* host, std::size_t count);
void cuda_free(float* device);
double cuda_copy_bandwidth(std::size_t bytes);

}  // namespace samplescope::batch
