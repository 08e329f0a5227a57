// Built instead of the CUDA backend when nvcc was not found: the engine still
// answers every question about the GPU, with the reason it cannot use one.
#include <stdexcept>

#include "kernels/cuda_backend.h"

namespace samplescope::batch {

CudaProbe probe_cuda() {
    CudaProbe probe;
    probe.reason = "built without CUDA (nvcc was not found when configuring)";
    return probe;
}

namespace {
[[noreturn]] void not_built() { throw std::runtime_error("the cuda backend was not built (nvcc was not found when configuring)"); }
}  // namespace

double run_cuda(const CudaBatch&, std::vector<RowResult>&, std::vector<std::uint8_t>&) { not_built(); }
float* cuda_upload(const float*, std::size_t) { not_built(); }
void cuda_free(float*) {}
void cuda_release() {}
std::uint64_t cuda_buffer_allocations() { return 0; }
double cuda_copy_bandwidth(std::size_t) { not_built(); }

}  // namespace samplescope::batch
